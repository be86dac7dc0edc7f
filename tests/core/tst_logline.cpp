// core::LogLine writes logfmt that a strict parser reads back: hostile values
// (quotes, backslashes, line breaks, '=', control characters, Unicode, the
// empty string, a PostgreSQL error text) come back as they went in, and the
// fields around them stay intact.

#include "core/logline.h"
#include "support/logfmt.h"

#include <QtTest>

using outbox::core::logfmtValue;
using outbox::core::LogKey;
using outbox::core::LogLine;
using outbox::testing::parseLogfmt;

static_assert(LogKey::isKeyCharacter('a') && LogKey::isKeyCharacter('9') &&
              LogKey::isKeyCharacter('_') && LogKey::isKeyCharacter('.') &&
              LogKey::isKeyCharacter('-'));
static_assert(!LogKey::isKeyCharacter('A') && !LogKey::isKeyCharacter(' ') &&
              !LogKey::isKeyCharacter('=') && !LogKey::isKeyCharacter('"'));

class TestLogLine : public QObject {
    Q_OBJECT

    static inline QString s_lastMessage; // written by the message handler

private Q_SLOTS:
    void hostileValuesRoundTrip_data() {
        QTest::addColumn<QString>("value");
        QTest::newRow("postgres error") << QStringLiteral("role \"x\" does not exist");
        QTest::newRow("german error")
            << QStringLiteral("Passwort-Authentifizierung für Benutzer »x« fehlgeschlagen");
        QTest::newRow("quote") << QStringLiteral("\"");
        QTest::newRow("two quotes") << QStringLiteral("\"\"");
        QTest::newRow("backslash") << QStringLiteral("C:\\temp\\x");
        QTest::newRow("trailing backslash") << QStringLiteral("x\\");
        QTest::newRow("escaped quote") << QStringLiteral("\\\"");
        QTest::newRow("newline") << QStringLiteral("line 1\nline 2");
        QTest::newRow("crlf") << QStringLiteral("a\r\nb");
        QTest::newRow("tab") << QStringLiteral("a\tb");
        QTest::newRow("equals") << QStringLiteral("a=b");
        QTest::newRow("fake field") << QStringLiteral("x level=fatal event=hacked");
        QTest::newRow("leading space") << QStringLiteral(" x");
        QTest::newRow("only space") << QStringLiteral(" ");
        QTest::newRow("empty") << QString();
        QTest::newRow("nul") << QString(QChar(0));
        QTest::newRow("escape sequence") << QStringLiteral("\x1b[31mred\x1b[0m");
        QTest::newRow("bell and del") << QStringLiteral("\a\x7f");
        QTest::newRow("c1 control") << QString(QChar(0x85));
        QTest::newRow("line separator") << QString(QString(QChar(0x2028)) + QChar(0x2029));
        QTest::newRow("unicode") << QStringLiteral("Grüße 日本 \U0001F600");
        QTest::newRow("unicode token") << QStringLiteral("ünïcødé");
        QTest::newRow("plain") << QStringLiteral("plain_token-1.5");
        QTest::newRow("backslash u") << QStringLiteral("\\u0041");
    }

    void hostileValuesRoundTrip() {
        QFETCH(QString, value);
        const QString line =
            LogLine("test").add("before", "a").add("value", value).add("after", "z").text();
        QVERIFY2(!line.contains(QLatin1Char('\n')) && !line.contains(QLatin1Char('\r')),
                 qPrintable(line));
        const auto parsed = parseLogfmt(line);
        QVERIFY2(parsed.fields, qPrintable(parsed.error));
        QCOMPARE(parsed.fields->size(), 4);
        QCOMPARE(parsed.fields->at(0).key, QStringLiteral("event"));
        QCOMPARE(parsed.fields->at(0).value, QStringLiteral("test"));
        QCOMPARE(parsed.fields->at(1).value, QStringLiteral("a"));
        QCOMPARE(parsed.fields->at(2).key, QStringLiteral("value"));
        QCOMPARE(parsed.fields->at(2).value, value);
        QCOMPARE(parsed.fields->at(3).key, QStringLiteral("after"));
        QCOMPARE(parsed.fields->at(3).value, QStringLiteral("z"));
        // Through UTF-8, as the line reaches a file or a pipe.
        const auto reread = parseLogfmt(QString::fromUtf8(line.toUtf8()));
        QVERIFY2(reread.fields, qPrintable(reread.error));
        QCOMPARE(reread.value(u"value"), value);
    }

    void valuesAreQuotedOnlyWhenNeeded() {
        QCOMPARE(logfmtValue(u"lease_lost"), QStringLiteral("lease_lost"));
        QCOMPARE(logfmtValue(u"http://127.0.0.1:8080/events"),
                 QStringLiteral("http://127.0.0.1:8080/events"));
        QCOMPARE(logfmtValue(u""), QStringLiteral("\"\""));
        QCOMPARE(logfmtValue(u"two words"), QStringLiteral("\"two words\""));
        QCOMPARE(logfmtValue(u"role \"x\" does not exist"),
                 QStringLiteral("\"role \\\"x\\\" does not exist\""));
        QCOMPARE(logfmtValue(u"a\nb\tc\\"), QStringLiteral("\"a\\nb\\tc\\\\\""));
        QCOMPARE(logfmtValue(QStringView(u"\x1b")), QStringLiteral("\"\\u001b\""));
        QCOMPARE(logfmtValue(u"»x«"), QStringLiteral("»x«"));
    }

    void numbersBooleansAndSharedFields() {
        const LogLine shared = LogLine().add("delivered", 3).add("rate", "1.5");
        const QString line = LogLine("stats")
                                 .add("big", qint64(-9007199254740993))
                                 .add("small", quint16(7))
                                 .add("listening", true)
                                 .add("stopped", false)
                                 .add(shared)
                                 .add(LogLine())
                                 .text();
        QCOMPARE(line, QStringLiteral("event=stats big=-9007199254740993 small=7 listening=true "
                                      "stopped=false delivered=3 rate=1.5"));
        QVERIFY(parseLogfmt(line).fields);
    }

    void aLogMessageIsTheLineAsItIs() {
        const QtMessageHandler previous =
            qInstallMessageHandler([](QtMsgType, const QMessageLogContext &,
                                      const QString &message) { s_lastMessage = message; });
        qInfo() << LogLine("x").add("error", u"a \"b\"");
        qInstallMessageHandler(previous);
        QCOMPARE(s_lastMessage, QStringLiteral("event=x error=\"a \\\"b\\\"\""));
    }

    void theParserIsStrict() {
        // The test's parser must refuse what a logfmt reader would misread,
        // or the round trips above would prove nothing.
        for (const char *bad : {"error=role \"x\" does not exist", "k=a b", "k=", "K=v", "k=v  j=w",
                                "k=\"unterminated", "k=\"bad \\q escape\"", "k=\"x\"y", "k=a=b",
                                "=v", "k=\"a\nb\""}) {
            const auto parsed = parseLogfmt(QString::fromUtf8(bad));
            QVERIFY2(!parsed.fields, bad);
        }
        QVERIFY(parseLogfmt(u"k=\"\\u00e9\"").fields);
        QCOMPARE(parseLogfmt(u"k=\"\\u00e9\"").value(u"k"), QStringLiteral("é"));
    }
};

QTEST_GUILESS_MAIN(TestLogLine)
#include "tst_logline.moc"
