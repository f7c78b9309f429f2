# The launch driver of the GPU backends on a fake engine (no GPU needed).
add_executable(test_launch_driver test_launch_driver.c)
target_link_libraries(test_launch_driver PRIVATE lode_backend_support lode_dispatch lode_warnings)
add_test(NAME launch_driver COMMAND test_launch_driver)
# The autotuner's pick, hit collection and Momentum batches the GPU
# backends share (no GPU needed).
add_executable(test_backend_support test_backend_support.c)
target_link_libraries(test_backend_support PRIVATE lode_backend_support lode_warnings)
add_test(NAME backend_support COMMAND test_backend_support)
