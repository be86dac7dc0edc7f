// Production binaries hold only production: outboxctl (what the systemd unit
// runs) and outbox-console neither link the development libraries (embedded
// cluster, development runner, benchmark, demo) nor contain their code. The
// development tools are programs of their own beside them, and a production
// binary whose tool is missing says which program to install.
//
// The link graph and the files come from CMake (tests/packaging/
// CMakeLists.txt writes linkgraph.txt); the symbols from nm, as built.

#include <QFile>
#include <QHash>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

namespace {

struct LinkGraph {
    QHash<QString, QStringList> links; // target -> the project targets it links
    QStringList production;
    QHash<QString, QString> binaries;    // production executable -> file
    QHash<QString, QString> development; // development library -> archive
};

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run run(const QString &program, const QStringList &arguments,
        const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment()) {
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    if (!process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished();
        return {-1, {}, "did not finish: " + process.errorString().toUtf8()};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

// Demangled names nm lists as defined in `file`, with their nm type letter.
QList<std::pair<QChar, QString>> definedSymbols(const QString &file) {
    const Run nm =
        run(QStringLiteral("nm"), {QStringLiteral("-C"), QStringLiteral("--defined-only"), file});
    QList<std::pair<QChar, QString>> symbols;
    if (nm.exitCode != 0) {
        qWarning().noquote() << "nm" << file << "failed:" << nm.err;
        return symbols;
    }
    static const QRegularExpression line(QStringLiteral("^[0-9a-fA-F]*\\s+(\\S)\\s+(.+)$"));
    const QList<QByteArray> lines = nm.out.split('\n');
    for (const QByteArray &text : lines) {
        const auto match = line.match(QString::fromUtf8(text));
        if (match.hasMatch())
            symbols.append({match.captured(1).at(0), match.captured(2)});
    }
    return symbols;
}

} // namespace

class TestProductionLinks final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QFile file(QStringLiteral(LINK_GRAPH));
        QVERIFY2(file.open(QIODevice::ReadOnly | QIODevice::Text),
                 qPrintable(file.fileName() + QStringLiteral(": ") + file.errorString()));
        const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
        for (const QString &line : lines) {
            QStringList words = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            if (words.size() < 2)
                continue;
            const QString kind = words.takeFirst();
            const QString target = words.takeFirst();
            if (kind == QLatin1String("links"))
                m_graph.links.insert(target, words);
            else if (kind == QLatin1String("production"))
                m_graph.production.append(target);
            else if (kind == QLatin1String("binary"))
                m_graph.binaries.insert(target, words.join(QLatin1Char(' ')));
            else if (kind == QLatin1String("development"))
                m_graph.development.insert(target, words.join(QLatin1Char(' ')));
        }
        QVERIFY(m_graph.production.contains(QLatin1String("outboxctl")));
        QVERIFY(m_graph.binaries.contains(QLatin1String("outboxctl")));
        QVERIFY(m_graph.development.contains(QLatin1String("outbox_devtools")));
    }

    // Every path from a production target to a development library, e.g.
    // "outboxctl -> outbox_cli -> outbox_devtools".
    void productionTargetsLinkNoDevelopmentLibrary() {
        QStringList offenders;
        for (const QString &start : std::as_const(m_graph.production)) {
            QVERIFY2(m_graph.links.contains(start), qPrintable(start + QStringLiteral(" unknown")));
            QHash<QString, QString> cameFrom{{start, QString()}};
            QStringList queue{start};
            while (!queue.isEmpty()) {
                const QString target = queue.takeFirst();
                if (m_graph.development.contains(target)) {
                    QStringList path{target};
                    for (QString at = cameFrom.value(target); !at.isEmpty();
                         at = cameFrom.value(at))
                        path.prepend(at);
                    offenders.append(path.join(QStringLiteral(" -> ")));
                    continue;
                }
                for (const QString &next : m_graph.links.value(target)) {
                    if (!cameFrom.contains(next)) {
                        cameFrom.insert(next, target);
                        queue.append(next);
                    }
                }
            }
        }
        QVERIFY2(offenders.isEmpty(),
                 qPrintable(QStringLiteral("production targets link development libraries "
                                           "(give the development code a target of its own):\n  ") +
                            offenders.join(QStringLiteral("\n  "))));
    }

    // No symbol of the development namespaces, and none that a development
    // library defines (its functions and data, not the inline and template
    // code every user of a header instantiates).
    void productionBinariesHoldNoDevelopmentCode() {
        QSet<QString> development;
        for (auto it = m_graph.development.cbegin(); it != m_graph.development.cend(); ++it) {
            qsizetype defined = 0;
            for (const auto &[type, name] : definedSymbols(it.value())) {
                if (type == QLatin1Char('T') || type == QLatin1Char('D') ||
                    type == QLatin1Char('B') || type == QLatin1Char('R')) {
                    development.insert(name);
                    ++defined;
                }
            }
            QVERIFY2(defined > 0, qPrintable(it.value() + QStringLiteral(" defines nothing?")));
        }
        static const QRegularExpression namespaces(
            QStringLiteral("\\boutbox::(devtools|bench|consolebench)::"));
        QStringList reports;
        for (auto it = m_graph.binaries.cbegin(); it != m_graph.binaries.cend(); ++it) {
            const auto symbols = definedSymbols(it.value());
            QVERIFY2(symbols.size() > 1000, qPrintable(it.value()));
            QStringList offenders;
            for (const auto &[type, name] : symbols) {
                if (development.contains(name) || namespaces.match(name).hasMatch())
                    offenders.append(name);
            }
            if (offenders.isEmpty())
                continue;
            // The shortest names first: the functions rather than the
            // templates instantiated over them.
            std::sort(offenders.begin(), offenders.end(),
                      [](const QString &a, const QString &b) { return a.size() < b.size(); });
            QStringList shown;
            for (const QString &name : offenders.mid(0, 6))
                shown.append(name.left(120));
            reports.append(QStringLiteral("%1 holds %2 symbols of development code, e.g.:\n  %3")
                               .arg(it.key())
                               .arg(offenders.size())
                               .arg(shown.join(QStringLiteral("\n  "))));
        }
        QVERIFY2(reports.isEmpty(), qPrintable(reports.join(QLatin1Char('\n'))));
    }

    // A production binary alone (no tool beside it, none on PATH) names the
    // program that is missing and exits with 2.
    void missingToolIsNamed_data() {
        QTest::addColumn<QString>("binary");
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("program");
        QTest::newRow("outboxctl runner")
            << QStringLiteral("outboxctl")
            << QStringList{QStringLiteral("runner"), QStringLiteral("--help")}
            << QStringLiteral("outboxctl-runner");
        QTest::newRow("outboxctl help bench")
            << QStringLiteral("outboxctl")
            << QStringList{QStringLiteral("help"), QStringLiteral("bench")}
            << QStringLiteral("outboxctl-bench");
        QTest::newRow("outbox-console --demo")
            << QStringLiteral("outbox-console") << QStringList{QStringLiteral("--demo")}
            << QStringLiteral("outbox-console-demo");
    }

    void missingToolIsNamed() {
        QFETCH(QString, binary);
        QFETCH(QStringList, arguments);
        QFETCH(QString, program);
        if (!m_graph.binaries.contains(binary))
            QSKIP("not built (OUTBOX_BUILD_CONSOLE=OFF)");
        QTemporaryDir alone;
        QVERIFY(alone.isValid());
        const QString copy = alone.filePath(binary);
        QVERIFY(QFile::copy(m_graph.binaries.value(binary), copy));
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("PATH"), alone.filePath(QStringLiteral("nothing")));
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        const Run result = run(copy, arguments, environment);
        QVERIFY2(result.exitCode == 2, result.err.constData());
        QVERIFY2(result.err.contains(QByteArray(program.toUtf8() + ", which is not installed")),
                 result.err.constData());
        QVERIFY(result.out.isEmpty());
    }

private:
    LinkGraph m_graph;
};

QTEST_GUILESS_MAIN(TestProductionLinks)
#include "tst_productionlinks.moc"
