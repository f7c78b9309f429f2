# getblocktemplate solo mining (core/gbt): unit tests and, with LODE_FUZZ, the
# fuzz target. Mining against a real node: tests/test_mining_gbt.py.
if(TARGET lode_gbt)
  lode_test_program(test_gbt)
  target_link_libraries(test_gbt PRIVATE lode_gbt)
  # The seed corpus doubles as the unit test's real regtest templates.
  target_compile_definitions(test_gbt PRIVATE LODE_GBT_CORPUS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/gbt")
  add_test(NAME gbt COMMAND test_gbt)
  set_tests_properties(gbt PROPERTIES TIMEOUT 120)

  if(LODE_FUZZ)
    lode_fuzz_target(gbt gbt 16384 lode_gbt)
  endif()
endif()
