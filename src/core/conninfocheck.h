#pragma once

#include "core/conninfo.h"

#include <QList>
#include <QString>

// What ConnInfo checks beyond libpq's parser: which parts of a connection
// string an error may quote, values that libpq would only refuse at connect
// time, and what the QPSQL driver could not pass on as written. Every
// message here is a bare sentence; ConnInfo adds the prefix.
namespace outbox::core::detail {

// Which parts of a connection string an error message may quote. Text that
// may belong to a password stays hidden, also when the string is malformed
// and libpq's reading of it is not what the writer meant: everything behind
// the first "password" (password=, sslpassword=, ?password=) and, in a URI,
// a user-info from its first ':' to the last '@'. A string without such text
// hides nothing.
class Disclosure final {
public:
    explicit Disclosure(QStringView text);
    // For values that do not come from a string: nothing to hide.
    static Disclosure everything() { return Disclosure(QStringView()); }

    bool hidesNothing() const { return m_hidden.isEmpty(); }
    // True when `fragment` occurs in the text and no occurrence of it
    // touches hidden text.
    bool mayShow(QStringView fragment) const;
    bool mayShowAt(qsizetype position, qsizetype length) const;
    // ` "fragment"`, or a note that it is not shown.
    QString quote(QStringView fragment) const;
    // How to write a password so that libpq reads all of it; appended to a
    // message that hid something.
    QString passwordHint() const;

private:
    QString m_text;
    bool m_uri = false;
    QList<QPair<qsizetype, qsizetype>> m_hidden; // [begin, end)
};

bool isUri(QStringView text);

// Refuses a URI that libpq would split somewhere the writer did not mean:
// an unencoded '@' or '/' in a user name or password.
Result<void> checkUriCredentials(QStringView uri);

// The one port number of a libpq port value ("5432", "5432,5432" for a host
// list, "" for libpq's default); lists of different ports are refused.
Result<int> portNumber(const QString &value, bool fromUri, const Disclosure &disclosure);

// Every field: keywords libpq knows, each once; values libpq accepts (where
// it would only refuse them at connect time, with less help); nothing QPSQL
// would change on the way to libpq.
Result<void> checkFields(const ConnInfo &info, const Disclosure &disclosure);

// Why `key` is refused: unknown, with a "did you mean" where one is close.
QString unknownKeyword(const QString &key, const Disclosure &disclosure);

} // namespace outbox::core::detail
