# Writes the outboxctl(1) man page from the program's own help, so that the
# page and `--help` never disagree. Run at build time:
#   cmake -DOUTBOXCTL=<binary> -DOUTPUT=<file> -DVERSION=<x.y.z> -P outboxctl-man.cmake

function(help_text out)
    execute_process(COMMAND ${OUTBOXCTL} ${ARGN} --help
                    OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "outboxctl ${ARGN} --help failed (${rc}): ${err}")
    endif()
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Help text as roff: backslashes doubled, lines starting with . or ' escaped,
# kept as preformatted (the help is already laid out for 80 columns).
function(as_roff out text)
    string(REPLACE "\\" "\\e" text "${text}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
    set(${out} ".nf\n${text}.fi\n" PARENT_SCOPE)
endfunction()

# The names listed under a heading of the general help: the indented first
# words of the lines after it.
function(listed_names out heading text)
    string(REGEX MATCH "${heading}[^\n]*\n([^\n ][^\n]*\n)?(( +[a-z]+ [^\n]*\n)+)" block "${text}")
    string(REGEX MATCHALL "\n +[a-z]+ " names "\n${CMAKE_MATCH_2}")
    set(result "")
    foreach(name IN LISTS names)
        string(STRIP "${name}" name)
        list(APPEND result ${name})
    endforeach()
    set(${out} ${result} PARENT_SCOPE)
endfunction()

help_text(main)
listed_names(names "Commands:" "${main}")
# `outboxctl runner` and `outboxctl bench` run the programs outboxctl-runner
# and outboxctl-bench, which must be built beside outboxctl.
listed_names(tools "Development tools" "${main}")
if(NOT names OR NOT tools)
    message(FATAL_ERROR "no commands or development tools found in 'outboxctl --help'")
endif()
string(TIMESTAMP today "%Y-%m-%d" UTC)

as_roff(main_roff "${main}")
set(page ".TH OUTBOXCTL 1 \"${today}\" \"outboxctl ${VERSION}\" \"Outbox Console\"\n")
string(APPEND page ".SH NAME\noutboxctl \\- operate a PostgreSQL transactional outbox and its dispatchers\n")
string(APPEND page ".SH SYNOPSIS\n.B outboxctl\n[\\fB\\-\\-db\\fR \\fICONNINFO\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n")
string(APPEND page ".SH DESCRIPTION\n${main_roff}")
string(APPEND page ".SH COMMANDS\n")
foreach(name IN LISTS names)
    help_text(text ${name})
    as_roff(text_roff "${text}")
    string(APPEND page ".SS ${name}\n${text_roff}")
endforeach()
string(APPEND page ".SH DEVELOPMENT TOOLS\n"
    "Programs of their own beside \\fBoutboxctl\\fR (\\fBoutboxctl\\-\\fR\\fITOOL\\fR), "
    "which \\fBoutboxctl\\fR \\fITOOL\\fR runs; not needed in production.\n")
foreach(name IN LISTS tools)
    help_text(text ${name})
    as_roff(text_roff "${text}")
    string(APPEND page ".SS ${name}\n${text_roff}")
endforeach()
string(APPEND page ".SH ENVIRONMENT\n.TP\n.B OUTBOX_DB\nThe default connection string.\n")
string(APPEND page ".TP\n.B OUTBOX_RUNNER_SECRET\nStandard Webhooks secrets of \\fBdispatch\\fR and \\fBrunner\\fR, space-separated.\n")
string(APPEND page ".SH FILES\n.TP\n.I /etc/outbox/NAME.env\nThe settings of \\fBoutbox-dispatch@NAME.service\\fR.\n")
string(APPEND page ".SH SEE ALSO\n\\fBoutbox-console\\fR(1), \\fBsystemctl\\fR(1)\n")
file(WRITE "${OUTPUT}" "${page}")
