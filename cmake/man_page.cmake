# man_page.cmake: writes the man page OUT (pmtune.1) as `PMTUNE help --man` prints it, from the
# command's own tables of commands and options; nothing of it is written by hand.
# Run as: cmake -DPMTUNE=path/to/pmtune -DOUT=dir/pmtune.1 -P man_page.cmake
foreach(var PMTUNE OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man_page.cmake: -D${var}=... is required")
  endif()
endforeach()
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND ${PMTUNE} help --man OUTPUT_FILE ${OUT}.new ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.new)
  message(FATAL_ERROR "man_page.cmake: '${PMTUNE} help --man' failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.new ${OUT})
