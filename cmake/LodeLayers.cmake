# The layers the compiler enforces (docs/ARCHITECTURE.md, "Layers").
#
# cmake/layers.json lists the layers, lowest first: each one's folder, its
# targets, the layers it uses, and (for a backend) the headers it shows.
#
# No target has the project root as an include directory. Instead each layer
# target gets an include view: a folder under the build tree that holds only
# a symbolic link to its own source folder, at the same relative path
#   <build>/include-views/lode_base/core/base -> <source>/core/base
# so `#include "core/base/log.h"` is written as before, but resolves only for
# targets that link lode_base (CMake passes a PUBLIC include directory on to
# the targets that link the library, and to nothing else). A backend's view
# of its whole folder is PRIVATE; its PUBLIC view holds only the headers the
# table names ("public"), so the registry sees a backend's vtable and nothing
# else, and `#include "backend-cpu/..."` in backend-cuda fails to compile.
#
#   lode_layer_library(<target>)
#       after add_library/add_executable: the target's include views, from
#       the table; a library must be named lode_<folder name> ('-' as '_'). At the end, lode_layer_check_links() fails the configure
#       step if a layer target links a layer library the table does not let
#       it use (which also rules out cycles: a layer uses only earlier ones).
#   lode_include_view(<target> <PUBLIC|PRIVATE|INTERFACE> <folder> [FILES <header>...])
#       a view of one folder (or of some of its headers) for any target:
#       tests use it for tests/ itself.
#   lode_layer_internals(<target> <layer-target>)
#       white-box tests and tools: the private view of a layer (a backend's
#       internal headers) for one more target, which must say why.

set(LODE_LAYERS_FILE "${PROJECT_SOURCE_DIR}/cmake/layers.json")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${LODE_LAYERS_FILE}")
set(LODE_INCLUDE_VIEWS "${CMAKE_BINARY_DIR}/include-views")
# A view made by an earlier configure step may point at a folder that has
# moved since: start afresh.
file(REMOVE_RECURSE "${LODE_INCLUDE_VIEWS}")

file(READ "${LODE_LAYERS_FILE}" _lode_layers_json)
string(JSON _lode_layer_count LENGTH "${_lode_layers_json}" layers)
math(EXPR _lode_layer_last "${_lode_layer_count} - 1")
set(_lode_layer_names "")
foreach(i RANGE ${_lode_layer_last})
  string(JSON name GET "${_lode_layers_json}" layers ${i} name)
  string(JSON folder GET "${_lode_layers_json}" layers ${i} folder)
  set(uses "")
  string(JSON n LENGTH "${_lode_layers_json}" layers ${i} uses)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(k RANGE ${last})
      string(JSON used GET "${_lode_layers_json}" layers ${i} uses ${k})
      if(NOT used IN_LIST _lode_layer_names)
        message(FATAL_ERROR "cmake/layers.json: layer ${name} uses ${used}, which is not a layer listed before it")
      endif()
      list(APPEND uses "${used}")
    endforeach()
  endif()
  set(public "")
  string(JSON type ERROR_VARIABLE no_public TYPE "${_lode_layers_json}" layers ${i} public)
  if(NOT no_public)
    string(JSON n LENGTH "${_lode_layers_json}" layers ${i} public)
    math(EXPR last "${n} - 1")
    foreach(k RANGE ${last})
      string(JSON header GET "${_lode_layers_json}" layers ${i} public ${k})
      list(APPEND public "${header}")
    endforeach()
  endif()
  string(JSON n LENGTH "${_lode_layers_json}" layers ${i} targets)
  math(EXPR last "${n} - 1")
  set(targets "")
  foreach(k RANGE ${last})
    string(JSON target GET "${_lode_layers_json}" layers ${i} targets ${k})
    list(APPEND targets "${target}")
    set_property(GLOBAL PROPERTY LODE_LAYER_OF_${target} "${name}")
  endforeach()
  set_property(GLOBAL PROPERTY LODE_LAYER_${name}_FOLDER "${folder}")
  set_property(GLOBAL PROPERTY LODE_LAYER_${name}_USES "${uses}")
  set_property(GLOBAL PROPERTY LODE_LAYER_${name}_PUBLIC "${public}")
  set_property(GLOBAL PROPERTY LODE_LAYER_${name}_TARGETS "${targets}")
  list(APPEND _lode_layer_names "${name}")
endforeach()
set_property(GLOBAL PROPERTY LODE_LAYER_NAMES "${_lode_layer_names}")

function(lode_include_view target scope folder)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "FILES")
  set(source "${PROJECT_SOURCE_DIR}/${folder}")
  if(NOT IS_DIRECTORY "${source}")
    message(FATAL_ERROR "lode_include_view(${target}): no folder ${folder}")
  endif()
  if(arg_FILES)
    set(root "${LODE_INCLUDE_VIEWS}/${target}/public")
    file(MAKE_DIRECTORY "${root}/${folder}")
    foreach(header IN LISTS arg_FILES)
      if(NOT EXISTS "${source}/${header}")
        message(FATAL_ERROR "lode_include_view(${target}): no header ${folder}/${header}")
      endif()
      file(CREATE_LINK "${source}/${header}" "${root}/${folder}/${header}" SYMBOLIC)
    endforeach()
  else()
    string(TOLOWER "${scope}" kind)
    set(root "${LODE_INCLUDE_VIEWS}/${target}/${kind}")
    get_filename_component(parent "${root}/${folder}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    if(NOT EXISTS "${root}/${folder}")
      file(CREATE_LINK "${source}" "${root}/${folder}" SYMBOLIC)
    endif()
  endif()
  target_include_directories(${target} ${scope} "${root}")
endfunction()

function(lode_layer_library target)
  get_property(layer GLOBAL PROPERTY LODE_LAYER_OF_${target})
  if(NOT layer)
    message(FATAL_ERROR "lode_layer_library(${target}): cmake/layers.json names no layer with this target")
  endif()
  get_property(folder GLOBAL PROPERTY LODE_LAYER_${layer}_FOLDER)
  get_property(public GLOBAL PROPERTY LODE_LAYER_${layer}_PUBLIC)
  get_target_property(type ${target} TYPE)
  # A layer's library is named like its folder (core/dispatch: lode_dispatch,
  # backend-cuda: lode_backend_cuda), so a link line says which folder it uses.
  get_filename_component(folder_name "${folder}" NAME)
  string(REPLACE "-" "_" library_name "lode_${folder_name}")
  if(NOT type STREQUAL "EXECUTABLE" AND NOT target STREQUAL library_name)
    message(FATAL_ERROR "lode_layer_library(${target}): the library of ${folder} is named ${library_name}")
  endif()
  if(type STREQUAL "EXECUTABLE")
    lode_include_view(${target} PRIVATE "${folder}")
  elseif(public)
    lode_include_view(${target} PRIVATE "${folder}")
    lode_include_view(${target} PUBLIC "${folder}" FILES ${public})
  else()
    lode_include_view(${target} PUBLIC "${folder}")
  endif()
  set_property(GLOBAL APPEND PROPERTY LODE_LAYER_TARGETS ${target})
endfunction()

function(lode_layer_internals target layer_target)
  set(view "${LODE_INCLUDE_VIEWS}/${layer_target}/private")
  if(NOT IS_DIRECTORY "${view}")
    message(FATAL_ERROR "lode_layer_internals(${target} ${layer_target}): ${layer_target} has no private "
                        "headers (call it after lode_layer_library(${layer_target}))")
  endif()
  target_include_directories(${target} PRIVATE "${view}")
endfunction()

# Every link of a layer target to a layer library must be one the table
# allows. Run once, after every target exists.
function(lode_layer_check_links)
  get_property(targets GLOBAL PROPERTY LODE_LAYER_TARGETS)
  set(errors "")
  foreach(target IN LISTS targets)
    get_property(layer GLOBAL PROPERTY LODE_LAYER_OF_${target})
    get_property(uses GLOBAL PROPERTY LODE_LAYER_${layer}_USES)
    get_target_property(links ${target} LINK_LIBRARIES)
    if(NOT links)
      continue()
    endif()
    foreach(link IN LISTS links)
      if(NOT TARGET "${link}")
        continue()
      endif()
      get_property(used GLOBAL PROPERTY LODE_LAYER_OF_${link})
      if(NOT used OR used STREQUAL layer)
        continue()
      endif()
      if(NOT used IN_LIST uses)
        string(APPEND errors "  ${target} (layer ${layer}) links ${link} (layer ${used})\n")
      endif()
    endforeach()
  endforeach()
  if(errors)
    message(FATAL_ERROR "Links that cmake/layers.json does not allow:\n${errors}"
                        "A layer may link only the layers it uses (docs/ARCHITECTURE.md, \"Layers\").")
  endif()
endfunction()
