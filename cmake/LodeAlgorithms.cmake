# LODE_ALGORITHMS: the algorithms' names (sha256d;scrypt;momentum;tf), read
# from the rows of core/base/algos.def, the one list of algorithms. Each
# backend builds its per-algorithm files from it (<backend>_<name>.c and the
# algorithm's kernel), so adding an algorithm adds no line to a CMakeLists.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/core/base/algos.def")
file(STRINGS "${PROJECT_SOURCE_DIR}/core/base/algos.def" lode_algo_rows REGEX "^LODE_ALGO\\(")
set(LODE_ALGORITHMS "")
foreach(row IN LISTS lode_algo_rows)
  string(REGEX REPLACE "^LODE_ALGO\\(([A-Z0-9_]+), *([a-z0-9_]+),.*" "\\1;\\2" id_name "${row}")
  list(GET id_name 0 id)
  list(GET id_name 1 name)
  # The build makes LODE_ALGO_<ID> from the name (cmake/EmbedVectors.cmake).
  string(TOUPPER "${name}" upper)
  if(NOT id STREQUAL upper)
    message(FATAL_ERROR "core/base/algos.def: ${id} is not the upper-case name of ${name}")
  endif()
  list(APPEND LODE_ALGORITHMS "${name}")
endforeach()
