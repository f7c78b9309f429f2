# `cmake --install build/release [--prefix DIR]` (DESTDIR honoured): the
# program in bin/, the systemd unit with its ExecStart at that program, and
# the documents in share/doc/lode/ (README.md, docs/ as the README names
# them). contrib/systemd/lode.service says /usr/local/bin/lode (the default
# prefix); the installed copy names the program where it was installed, as
# the prefix is known only when `cmake --install --prefix` runs.
include(GNUInstallDirs)
set(LODE_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "where cmake --install puts lode.service (relative: under the install prefix)")

install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs")
install(CODE "
  set(lode_unit_source [[${PROJECT_SOURCE_DIR}/contrib/systemd/lode.service]])
  set(lode_unit_built [[${PROJECT_BINARY_DIR}/install/lode.service]])
  set(lode_bindir [[${CMAKE_INSTALL_BINDIR}]])
  set(lode_unit_dir [[${LODE_SYSTEMD_UNIT_DIR}]])
  include([[${PROJECT_SOURCE_DIR}/cmake/LodeInstallUnit.cmake]])
")
