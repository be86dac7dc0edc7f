# Fails when a tracked C++ file is not formatted with the repository's
# .clang-format. Run: cmake -DSOURCE_DIR=. -DCLANG_FORMAT=clang-format -DGIT=git -P cmake/CheckFormat.cmake
execute_process(COMMAND ${GIT} ls-files -- "*.cpp" "*.h"
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE files OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE git_result)
if(NOT git_result EQUAL 0)
    message(FATAL_ERROR "git ls-files failed")
endif()
string(REPLACE "\n" ";" files "${files}")
set(unformatted "")
foreach(file IN LISTS files)
    execute_process(COMMAND ${CLANG_FORMAT} --dry-run -Werror ${file}
                    WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET)
    if(NOT result EQUAL 0)
        list(APPEND unformatted ${file})
    endif()
endforeach()
list(LENGTH files count)
if(unformatted)
    string(REPLACE ";" "\n  " listing "${unformatted}")
    message(FATAL_ERROR "not clang-formatted (run clang-format -i on them):\n  ${listing}")
endif()
message(STATUS "${count} files checked, all formatted")
