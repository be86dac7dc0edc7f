#pragma once

#include <QByteArray>
#include <QString>
#include <QStringView>
#include <QUrl>

namespace outbox::core {

// Text as it is shown to people: on a terminal, in a log line, in a file a
// person opens. Text written by others (producers' topics and namespaces, a
// runner's reply in last_error, a pause reason) must not drive the terminal:
// an ESC sequence can rewrite the screen, set the window title or hide lines.

// Every C0 control (U+0000-U+001F, ESC among them), DEL and every C1 control
// (U+0080-U+009F) as a visible escape: "\x1b", "\x7f", "\u009b". With
// keepNewlines, '\n' stays a line break (for multi-line text such as an
// indented payload). Everything else, backslashes too, is left as it is.
QString escapeControls(QStringView text, bool keepNewlines = false);
// The same for JSON text: DEL and the C1 controls (which JSON allows raw in
// strings, and which PostgreSQL's jsonb returns raw) become \u escapes. The
// C0 controls are already escaped in valid JSON; the result stays valid JSON
// with the same value.
QByteArray escapeJsonControls(const QByteArray &json);

// A URL without what may be a credential: the user name and password and
// the query (where API keys travel), and without a fragment. For what is
// stored where others may read it (a settings file, the dispatcher registry);
// the URL itself keeps them for the requests.
QUrl urlWithoutCredentials(const QUrl &url);
// The same for logs and messages, saying what was left out:
// "https://***@host/events?***".
QString redactedUrl(const QUrl &url);
// The same for text that may not parse as a URL (a mistyped --runner-url):
// user info and query are replaced in the text, then controls are escaped.
QString redactedUrlText(const QString &text);

} // namespace outbox::core
