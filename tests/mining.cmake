# Mining for real against litecoind regtest (scripts/regtest.py) and the test
# pool (tests/pool/). litecoind must be on PATH: without it these tests FAIL
# with a message saying so (CI installs the Debian package litecoind).
foreach(part gbt stratum)
  add_test(NAME mining_${part}
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_mining_${part}.py
                   $<TARGET_FILE:lode>)
  set_tests_properties(mining_${part} PROPERTIES TIMEOUT 600 LABELS mining)
endforeach()
