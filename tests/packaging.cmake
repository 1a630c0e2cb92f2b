# SPDX-License-Identifier: MIT
# The packages: debian/ built, checked by lintian, installed, used from
# the installed files alone and purged (root: it installs into the
# running system, alone); redhat/ernic.spec built with rpmbuild.
add_test(NAME pkg_deb
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packaging/deb.sh ${CMAKE_SOURCE_DIR})
add_test(NAME pkg_rpm
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/packaging/rpm.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(pkg_deb pkg_rpm PROPERTIES SKIP_RETURN_CODE 77
  RUN_SERIAL ON TIMEOUT 1200)
