# `cmake --install`: the public headers (include/bulwark/), the static libraries of the public API
# and a CMake package, so that a program builds against an installed Bulwark with
#
#   find_package(bulwark REQUIRED)
#   target_link_libraries(app PRIVATE bulwark::bulwark)
#
# Static, not shared: every Bulwark library is static (BulwarkHelpers.cmake), and one shared
# libbulwark.so would need all of them compiled as position-independent code and a symbol map
# that hides the internal classes. The static libraries that bulwark::bulwark needs (the
# transitive closure of bulwark_api, found below, so a new internal dependency is exported
# without editing this file) are installed and exported; bulwarkConfig.cmake finds the system
# packages they link (find_dependency / pkg_check_modules). Internal headers are not installed:
# the libraries' installed include path is include/ alone.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The non-imported targets `target` links to, directly or through other targets, into `out_var`.
function(bulwark_link_closure target out_var)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${current})
    get_target_property(direct ${current} LINK_LIBRARIES)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(dep IN LISTS direct interface)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      if(NOT TARGET "${dep}")
        continue()
      endif()
      get_target_property(imported ${dep} IMPORTED)
      get_target_property(aliased ${dep} ALIASED_TARGET)
      if(aliased)
        set(dep ${aliased})
      elseif(imported)
        continue()
      endif()
      list(APPEND queue ${dep})
    endforeach()
  endwhile()
  set(${out_var} ${seen} PARENT_SCOPE)
endfunction()

bulwark_link_closure(bulwark_api BULWARK_EXPORTED_LIBRARIES)
set_target_properties(bulwark_api PROPERTIES EXPORT_NAME bulwark)
install(TARGETS ${BULWARK_EXPORTED_LIBRARIES} EXPORT bulwarkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/bulwark DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT bulwarkTargets NAMESPACE bulwark:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bulwark)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/bulwarkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/bulwarkConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bulwark)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bulwarkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/bulwarkConfig.cmake ${PROJECT_BINARY_DIR}/bulwarkConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bulwark)
