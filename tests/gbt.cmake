# getblocktemplate solo mining (core/gbt): unit tests, a by-hand driver for a
# real node (not run by ctest) and, with LODE_FUZZ, the fuzz target.
if(TARGET lode_gbt)
  lode_test_program(test_gbt)
  target_link_libraries(test_gbt PRIVATE lode_gbt)
  # The seed corpus doubles as the unit test's real regtest templates.
  target_compile_definitions(test_gbt PRIVATE LODE_GBT_CORPUS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/gbt")
  add_test(NAME gbt COMMAND test_gbt)
  set_tests_properties(gbt PROPERTIES TIMEOUT 120)

  add_executable(gbt_driver gbt_driver.c)
  target_link_libraries(gbt_driver PRIVATE lode_gbt lode_core lode_warnings)

  if(LODE_FUZZ)
    add_executable(fuzz_gbt fuzz/fuzz_gbt.c)
    target_compile_options(fuzz_gbt PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_gbt PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_gbt PRIVATE lode_gbt lode_warnings)
    # New inputs go to a scratch folder in the build tree (libFuzzer writes
    # into the first folder); the seeds are read from the source tree.
    set(fuzz_gbt_scratch "${CMAKE_CURRENT_BINARY_DIR}/fuzz_gbt_corpus")
    file(MAKE_DIRECTORY "${fuzz_gbt_scratch}")
    add_test(NAME fuzz_gbt
             COMMAND fuzz_gbt -max_total_time=30 -timeout=10 -rss_limit_mb=2048 -max_len=16384
                     "${fuzz_gbt_scratch}" "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/gbt")
    set_tests_properties(fuzz_gbt PROPERTIES TIMEOUT 120)
  endif()
endif()
