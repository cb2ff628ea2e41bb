# uneven_app: the contract app plus GET /uneven/:n/:us (one request in n spins us microseconds),
# for measuring the threading policies under uneven request costs (bench.py --matrix policies).
add_executable(uneven_app ${CMAKE_CURRENT_LIST_DIR}/uneven_app.cpp)
target_link_libraries(uneven_app PRIVATE skiff::skiff skiff_project_flags)
