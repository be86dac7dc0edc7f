#include "cli/commands.h"
#include "cli/filteroptions.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "store/eventexport.h"

#include <QFile>
#include <QSaveFile>

namespace outbox::cli {

int runExport(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Write every event that matches the filters as JSON lines (one "
                                "event per line, as `list --jsonl` prints them), oldest first. "
                                "The events are read a page at a time, so any number fits in "
                                "constant memory. A file appears only when the export is "
                                "complete; Ctrl-C stops it and leaves no file."));
    addFilterOptions(parser);
    const auto output =
        option("output", "Write to this file, or - for standard output (the default).", "file");
    const auto pageSize =
        option("page-size", "Events read per query (1-10000, default 1000).", "n");
    parser.addOptions({output, pageSize});
    parser.setEpilog(QStringLiteral(
        "Example: every dead event of one namespace, to a file\n"
        "  outboxctl export --status dead --namespace billing --output billing-dead.jsonl"));
    if (auto exit = parser.parseOptionsOnly())
        return *exit;
    auto filter = filterFromOptions(parser);
    if (!filter)
        return parser.usageError(filter.errorMessage());
    auto size = parser.integer(QStringLiteral("page-size"), 1000, 1, 10000);
    if (!size)
        return parser.usageError(size.errorMessage());
    const QString path = parser.isSet(output) ? parser.value(output) : QStringLiteral("-");
    if (path.isEmpty())
        return parser.usageError(QStringLiteral("--output: give a file name, or - for standard "
                                                "output"));
    const bool toStdout = path == QLatin1String("-");

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;

    auto &out = context.console.out();
    auto &err = context.console.err();
    // Written beside the target and renamed over it at the end.
    QSaveFile file(toStdout ? QString() : path);
    if (!toStdout && !file.open(QIODevice::WriteOnly))
        return parser.fail(core::Error{
            core::ErrorKind::Invalid,
            QStringLiteral("--output: cannot write %1: %2").arg(path, file.errorString())});

    InterruptGuard interrupt;
    store::ExportOptions options;
    options.pageSize = int(size.value());
    options.progress = [&](qint64 done, qint64 total) {
        if (!toStdout && done > 0)
            err << "export: " << done << '/' << total << '\n' << Qt::flush;
        return !interrupt.interrupted();
    };
    store::EventExport exporter(*connection);
    auto result = exporter.run(
        filter.value(),
        [&](const core::OutboxEvent &event) -> core::Result<void> {
            const QByteArray line = eventJson(event) + '\n';
            if (toStdout) {
                out << QString::fromUtf8(line);
                return {};
            }
            if (file.write(line) != line.size())
                return core::Error{
                    core::ErrorKind::Failed,
                    QStringLiteral("writing %1 failed: %2").arg(path, file.errorString())};
            return {};
        },
        options);
    out.flush();
    if (!result)
        return parser.fail(result.error());
    if (result->cancelled) {
        err << "Interrupted after " << result->written << " of " << result->total << " events; "
            << (toStdout ? "the output is incomplete.\n" : "nothing was written.\n");
        return ExitInterrupted;
    }
    if (!toStdout) {
        if (!file.commit())
            return parser.fail(
                core::Error{core::ErrorKind::Failed,
                            QStringLiteral("saving %1 failed: %2").arg(path, file.errorString())});
        err << "Exported " << result->written << " events to " << path << ".\n";
    }
    return ExitOk;
}

} // namespace outbox::cli
