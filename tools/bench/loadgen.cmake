# skiff_loadgen: the benchmark harness's load generator (loadgen/), on skiff's own poller.
# Linux only: it times the open loop with a timerfd and reads CPU time from /proc.
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  return()
endif()
add_executable(skiff_loadgen ${CMAKE_CURRENT_LIST_DIR}/loadgen/main.cpp)
target_link_libraries(skiff_loadgen PRIVATE skiff::skiff skiff_project_flags)

# Its histogram bound and response framing, checked; a ctest test when tests are built.
add_executable(skiff_loadgen_self_test ${CMAKE_CURRENT_LIST_DIR}/loadgen/self_test.cpp)
target_link_libraries(skiff_loadgen_self_test PRIVATE skiff::skiff skiff_project_flags)
if(SKIFF_BUILD_TESTS)
  add_test(NAME loadgen_self_test COMMAND skiff_loadgen_self_test)
endif()
