#pragma once

#include "core/conninfo.h"

namespace outbox::core::detail {

// The two grammars behind ConnInfo::parse(). Both validate keywords and
// values as they go and store into `info`; on error `info` holds what was
// read so far (ConnInfo::parse uses it to keep the password out of the
// message).

// libpq's key=value form, parsed as libpq's conninfo_parse() does.
Result<void> parseConnInfoKeyValue(QStringView text, ConnInfo &info);
// postgresql://... starting after the first `prefixLength` characters.
Result<void> parseConnInfoUri(QStringView text, qsizetype prefixLength, ConnInfo &info);

// libpq's idea of whitespace (isspace() in the C locale).
bool isConnInfoSpace(QChar c);

} // namespace outbox::core::detail
