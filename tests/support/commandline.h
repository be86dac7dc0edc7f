#pragma once

#include <QString>
#include <QStringList>

namespace outbox::testing {

// A command line as the arguments a program receives, written the way a
// person types it: "list --limit 0" is {"list", "--limit", "0"}. Words are
// split at spaces, without quoting: an argument that holds a space needs a
// QStringList of its own.
inline QStringList commandLine(const char *text) {
    return QString::fromUtf8(text).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

} // namespace outbox::testing
