# Trial factoring's files (core/tf): the worktodo file, checkpoints, result
# lines and the finishing steps, without a device. The device side is
# tests/test_tf.c, the lode tf command tests/test_tf.py.
lode_test_program(test_tf_files)
target_link_libraries(test_tf_files PRIVATE lode_tf)
add_test(NAME tf_files COMMAND test_tf_files)
set_tests_properties(tf_files PROPERTIES TIMEOUT 120)
