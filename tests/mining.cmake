# Mining for real against litecoind regtest (scripts/regtest.py) and the test
# pool (tests/pool/). litecoind must be on PATH: without it these tests FAIL
# with a message saying so (CI installs the Debian package litecoind).
foreach(part gbt stratum)
  add_test(NAME mining_${part}
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_mining_${part}.py
                   $<TARGET_FILE:lode>)
  set_tests_properties(mining_${part} PROPERTIES TIMEOUT 600 LABELS mining PROCESSORS 2)
endforeach()
# MWEB blocks mined by lode that litecoind accepts (solo and through the test
# pool), and scripts/regtest.py run with an empty HOME (tests/test_mweb.py).
foreach(scenario gbt stratum fresh_home)
  add_test(NAME mweb_${scenario}
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_mweb.py
                   $<TARGET_FILE:lode> ${scenario})
  set_tests_properties(mweb_${scenario} PROPERTIES TIMEOUT 600 LABELS mining PROCESSORS 2)
endforeach()
# Other miners' command lines against the test pool: JSON log events against
# the pool's counts, credentials in URLs and -O (masked in /proc/PID/cmdline),
# pools through SOCKS5 (microsocks) and HTTP CONNECT (tinyproxy) proxies.
add_test(NAME service_pool
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_service_pool.py $<TARGET_FILE:lode>)
set_tests_properties(service_pool PROPERTIES TIMEOUT 600 LABELS mining PROCESSORS 2)
# The summary's words (docs/OPERATIONS.md, "Words") on a short solo run: the
# expected hits against the node's target, every hit counted once.
add_test(NAME summary_words
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_summary_words.py $<TARGET_FILE:lode>)
set_tests_properties(summary_words PROPERTIES TIMEOUT 600 LABELS mining PROCESSORS 2)
