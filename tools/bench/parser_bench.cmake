# Request-parser micro-benchmark (tools/bench/parser_bench.cpp has the commands). Build with
# CMAKE_BUILD_TYPE=Release; run pinned:  taskset -c 1 <build>/tools/bench/parser_bench
add_executable(parser_bench ${CMAKE_CURRENT_LIST_DIR}/parser_bench.cpp)
target_link_libraries(parser_bench PRIVATE skiff::skiff skiff_project_flags)
# The browser request lives beside the repository (../shared/peers/counts); a path argument
# overrides it.
target_compile_definitions(parser_bench PRIVATE
  SKIFF_BROWSER_REQUEST="${PROJECT_SOURCE_DIR}/../shared/peers/counts/req_browser.txt")
