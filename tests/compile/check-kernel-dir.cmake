# SPDX-License-Identifier: MIT
# cmake -DKERNEL_DIR=<dir> -DSYSTEM_DIRS=<dir>|<dir>... -P check-kernel-dir.cmake
#
# The directory that provides <linux/tracepoint.h> is put on the include path before the
# system's: no header in it may have the name of a header in the compiler's system include
# directories, or it would hide that header from every program built against usertp.
cmake_policy(VERSION 3.25)
if(NOT IS_DIRECTORY "${KERNEL_DIR}")
	message(FATAL_ERROR "no directory ${KERNEL_DIR}")
endif()
string(REPLACE "|" ";" dirs "${SYSTEM_DIRS}")
if(NOT dirs)
	message(FATAL_ERROR "no system include directories given")
endif()
file(GLOB_RECURSE headers RELATIVE "${KERNEL_DIR}" "${KERNEL_DIR}/*")
list(SORT headers)
if(NOT "linux/tracepoint.h" IN_LIST headers)
	message(FATAL_ERROR "${KERNEL_DIR} has no linux/tracepoint.h")
endif()
set(hidden 0)
foreach(header IN LISTS headers)
	foreach(dir IN LISTS dirs)
		if(EXISTS "${dir}/${header}")
			message(SEND_ERROR "${KERNEL_DIR}/${header} hides ${dir}/${header}")
			math(EXPR hidden "${hidden} + 1")
		endif()
	endforeach()
endforeach()
list(LENGTH headers n)
list(LENGTH dirs ndirs)
message(STATUS "${n} headers in ${KERNEL_DIR}, ${hidden} hiding a header of ${ndirs} system directories")
