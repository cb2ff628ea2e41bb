# observed_app: the contract app with access_log and serve_metrics on, for the cost of the
# observers per request (counts.py --binary build/bench-counts/tools/bench/observed_app).
add_executable(observed_app ${CMAKE_CURRENT_LIST_DIR}/observed_app.cpp)
target_link_libraries(observed_app PRIVATE skiff::skiff skiff_project_flags)
