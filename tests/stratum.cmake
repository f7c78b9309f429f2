# The stratum v1 client (core/stratum): parsing, vectors, hostile input,
# loopback pool, TLS. Included by tests/CMakeLists.txt when present.
if(TARGET lode_stratum)
  add_executable(test_stratum test_stratum.c stratum_fake_mining.c)
  target_link_libraries(test_stratum PRIVATE lode_stratum lode_test_util OpenSSL::SSL OpenSSL::Crypto lode_warnings)
  add_test(NAME stratum COMMAND test_stratum)
  set_tests_properties(stratum PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
  add_executable(test_stratum_msg test_stratum_msg.c)
  target_link_libraries(test_stratum_msg PRIVATE lode_stratum lode_test_util lode_warnings)
  add_test(NAME stratum_msg COMMAND test_stratum_msg)
  # Pool and proxy URLs: the forms taken and refused, credentials, pins.
  add_executable(test_stratum_url test_stratum_url.c)
  target_link_libraries(test_stratum_url PRIVATE lode_stratum lode_test_util lode_warnings)
  add_test(NAME stratum_url COMMAND test_stratum_url)
  # Hostile pools (a flood of messages, a pool that answers no submit)
  # against the program: a small log, stall, unanswered and unsent counts.
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_test(NAME stratum_flood COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_stratum_flood.py
                                      $<TARGET_FILE:lode>)
  set_tests_properties(stratum_flood PROPERTIES TIMEOUT 300 PROCESSORS 2)

  # libFuzzer target: the line parser and notify -> job (the fuzz preset).
  if(LODE_FUZZ)
    lode_fuzz_target(stratum stratum 4096 lode_stratum)
  endif()
endif()
