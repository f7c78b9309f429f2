# The stratum v1 client (core/stratum): parsing, vectors, hostile input,
# loopback pool, TLS. Included by tests/CMakeLists.txt when present.
if(TARGET lode_stratum)
  add_executable(test_stratum test_stratum.c stratum_fake_mining.c)
  target_link_libraries(test_stratum PRIVATE lode_stratum lode_test_util OpenSSL::SSL OpenSSL::Crypto lode_warnings)
  add_test(NAME stratum COMMAND test_stratum)
  set_tests_properties(stratum PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

  # libFuzzer target: the line parser and notify -> job (-DLODE_FUZZ=ON, clang).
  if(LODE_FUZZ)
    # The parser is compiled into the target itself so libFuzzer sees its
    # coverage (lode_stratum is built without instrumentation).
    add_executable(fuzz_stratum fuzz/fuzz_stratum.c "${PROJECT_SOURCE_DIR}/core/stratum/stratum_msg.c")
    target_compile_options(fuzz_stratum PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_stratum PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_stratum PRIVATE lode_stratum lode_warnings)
    # libFuzzer writes new inputs into its first folder: a scratch one in
    # the build tree; the seeds are read from the source tree.
    set(fuzz_stratum_scratch "${CMAKE_CURRENT_BINARY_DIR}/fuzz_stratum_corpus")
    file(MAKE_DIRECTORY "${fuzz_stratum_scratch}")
    add_test(NAME fuzz_stratum
             COMMAND fuzz_stratum -max_total_time=30 -max_len=4096
                     "${fuzz_stratum_scratch}" "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/stratum")
    set_tests_properties(fuzz_stratum PROPERTIES TIMEOUT 120)
  endif()
endif()
