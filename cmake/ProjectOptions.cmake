# One INTERFACE target carries the language level, warnings and Qt's safety
# defines; every target of the project links it.
add_library(outbox_options INTERFACE)
target_compile_features(outbox_options INTERFACE cxx_std_20)
target_compile_options(outbox_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                 -Wnon-virtual-dtor -Wold-style-cast)
if(OUTBOX_WARNINGS_AS_ERRORS)
    target_compile_options(outbox_options INTERFACE -Werror)
endif()
target_compile_definitions(outbox_options INTERFACE
    QT_NO_CAST_FROM_ASCII
    QT_NO_CAST_TO_ASCII
    QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
    QT_USE_QSTRINGBUILDER
    QT_NO_FOREACH
    QT_NO_KEYWORDS
    QT_DISABLE_DEPRECATED_BEFORE=0x060400)
target_include_directories(outbox_options INTERFACE ${PROJECT_SOURCE_DIR}/src)

if(OUTBOX_SANITIZE)
    target_compile_options(outbox_options INTERFACE -fsanitize=address,undefined
                                                    -fno-omit-frame-pointer)
    target_link_options(outbox_options INTERFACE -fsanitize=address,undefined)
endif()
