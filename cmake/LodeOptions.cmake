# Tri-state options for optional backends and dependencies:
#   AUTO  use it when it is found (the default)
#   ON    require it: the configure step fails with a clear message if missing
#   OFF   leave it out
#
#   lode_tristate(<var> <doc>)                  declare the option
#   lode_resolve(<var> <found-var> <message>)   decide; sets <var>_ENABLED
function(lode_tristate var doc)
  set(${var} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE ${var} PROPERTY STRINGS AUTO ON OFF)
endfunction()

function(lode_resolve var found message)
  string(TOUPPER "${${var}}" mode)
  if(NOT mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${var} must be AUTO, ON or OFF, not '${${var}}'")
  endif()
  if(mode STREQUAL "OFF")
    set(${var}_ENABLED OFF PARENT_SCOPE)
  elseif(${found})
    set(${var}_ENABLED ON PARENT_SCOPE)
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "${var}=ON but ${message}")
  else()
    message(STATUS "${var}=AUTO: not found, building without it (${message})")
    set(${var}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()
