# skiff_loadgen: the benchmark harness's load generator (loadgen/), on skiff's own poller.
add_executable(skiff_loadgen ${CMAKE_CURRENT_LIST_DIR}/loadgen/main.cpp)
target_link_libraries(skiff_loadgen PRIVATE skiff::skiff skiff_project_flags)
