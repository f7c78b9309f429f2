# The launch driver of the GPU backends on a fake engine (no GPU needed).
add_executable(test_launch_driver test_launch_driver.c)
target_link_libraries(test_launch_driver PRIVATE lode_backend_support lode_dispatch lode_warnings)
add_test(NAME launch_driver COMMAND test_launch_driver)
