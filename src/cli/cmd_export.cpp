#include "cli/commands.h"
#include "cli/filteroptions.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "core/outputfile.h"
#include "store/eventexport.h"

namespace outbox::cli {

int runExport(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Write every event that matches the filters as JSON lines (one "
                                "event per line, as `list --jsonl` prints them), oldest first. "
                                "The events are read a page at a time, so any number fits in "
                                "constant memory. A file appears only when the export is "
                                "complete (readable by you only); Ctrl-C stops it and leaves "
                                "no file."));
    store::EventFilter filter;
    store::ExportOptions options;
    parser.addOptions(filterOptions(filter));
    const auto output =
        option("output", "Write to this file, or - for standard output (the default).", "file");
    const auto overwrite =
        option("overwrite", "Replace the --output file if it exists (never a link or a device).");
    parser.addOptions(
        {output, overwrite,
         integerOption("page-size <n>", "Events read per query (1-10000, default 1000).",
                       options.pageSize, 1, 10000)});
    parser.setEpilog(QStringLiteral(
        "Example: every dead event of one namespace, to a file\n"
        "  outboxctl export --status dead --namespace billing --output billing-dead.jsonl\n"
        "The file is created readable by you only (it holds payloads). An existing file is\n"
        "replaced only with --overwrite; a symbolic link or a device is never written to."));
    if (auto exit = parser.parseAndRead())
        return *exit;
    const QString path = parser.isSet(output) ? parser.value(output) : QStringLiteral("-");
    if (path.isEmpty())
        return parser.usageError(QStringLiteral("--output: give a file name, or - for standard "
                                                "output"));
    const bool toStdout = path == QLatin1String("-");

    // Checked before connecting: a wrong target is a mistake on the command line.
    std::unique_ptr<core::OutputFile> file;
    if (!toStdout) {
        auto created = core::OutputFile::create(
            path,
            parser.isSet(overwrite) ? core::OutputFile::Existing::Replace
                                    : core::OutputFile::Existing::Refuse,
            QStringLiteral("add --overwrite to replace it, or choose another name"));
        if (!created)
            return parser.fail(core::Error{core::ErrorKind::Invalid,
                                           QStringLiteral("--output: ") + created.errorMessage()});
        file = std::move(created).value();
    }

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;

    auto &out = context.console.out();
    auto &err = context.console.err();

    InterruptGuard interrupt;
    options.progress = [&](qint64 done, qint64 total) {
        if (!toStdout && done > 0)
            err << "export: " << done << '/' << total << '\n' << Qt::flush;
        return !interrupt.interrupted();
    };
    store::EventExport exporter(*connection);
    const auto json = [](const core::OutboxEvent &event) { return eventJson(event); };
    const store::EventExport::Sink toOut = [&](const core::OutboxEvent &event) {
        printJsonLine(out, event);
        return core::Result<void>();
    };
    auto result = exporter.run(
        filter, toStdout ? toOut : store::lineSink(file->device(), path, json), options);
    out.flush();
    if (!result)
        return parser.fail(result.error());
    if (result->cancelled) {
        err << "Interrupted after " << result->written << " of " << result->total << " events; "
            << (toStdout ? "the output is incomplete.\n" : "nothing was written.\n");
        return ExitInterrupted;
    }
    if (!toStdout) {
        if (auto committed = file->commit(); !committed)
            return parser.fail(committed.error());
        err << "Exported " << result->written << " events to " << path << ".\n";
    }
    return ExitOk;
}

} // namespace outbox::cli
