# Router micro-benchmark (router_bench.md): skiff's router on the GitHub API route set and on
# a small static + parameter set. Build with CMAKE_BUILD_TYPE=Release; run pinned:
#   taskset -c 1 <build>/tools/bench/router_bench [github_routes.txt]
add_executable(router_bench ${CMAKE_CURRENT_LIST_DIR}/router_bench.cpp)
target_link_libraries(router_bench PRIVATE skiff::skiff skiff_project_flags)
# The route file lives beside the repository (../shared/data); a path argument overrides it.
target_compile_definitions(router_bench PRIVATE
  SKIFF_GITHUB_ROUTES="${PROJECT_SOURCE_DIR}/../shared/data/github_routes.txt")
