#include "console/widgets/application.h"

#include "console/model/commandline.h"
#include "console/model/consolesettings.h"
#include "console/widgets/connectiondialog.h"
#include "console/widgets/demolauncher.h"
#include "console/widgets/fleetwindow.h"
#include "console/widgets/focusstyle.h"
#include "console/widgets/mainwindow.h"

#include <QApplication>
#include <QIcon>
#include <QLoggingCategory>
#include <QMessageBox>
#include <QSettings>
#include <QTimer>

#include <cstdio>

#ifndef OUTBOX_VERSION
#define OUTBOX_VERSION "unknown"
#endif

// Resources of a static library must be registered by name, outside any
// namespace.
static void initConsoleResources() {
    Q_INIT_RESOURCE(console);
}

namespace outbox::console {

namespace {

constexpr int kUsageError = 2;

void printErr(const QString &text) {
    std::fputs(qPrintable(QStringLiteral("outbox-console: ") + text + QLatin1Char('\n')), stderr);
}

bool hasDisplay() {
#if defined(Q_OS_LINUX) || defined(Q_OS_FREEBSD)
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (platform.startsWith("offscreen") || platform.startsWith("minimal")) {
        return false;
    }
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
#else
    return true;
#endif
}

int usageError(int argc, char **argv, const QString &message) {
    printErr(message);
    if (hasDisplay()) {
        QApplication app(argc, argv);
        QMessageBox::critical(nullptr, QStringLiteral("Outbox Console"), message);
    }
    return kUsageError;
}

void setUpApplication() {
    initResources();
    QApplication::setOrganizationName(QStringLiteral("outbox-console"));
    QApplication::setApplicationName(QStringLiteral("outbox-console"));
    QApplication::setApplicationDisplayName(QStringLiteral("Outbox Console"));
    QApplication::setApplicationVersion(QStringLiteral(OUTBOX_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("outbox-console"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/outbox-console.svg")));
    QApplication::setStyle(new FocusStyle); // over the platform's style
    // A line per dead event on stderr says nothing the dispatcher panel does
    // not (a demo wrote 900 in 5 minutes); QT_LOGGING_RULES still wins.
    QLoggingCategory::setFilterRules(QStringLiteral("outbox.dispatch.events.info=false"));
}

void scheduleScreenshot(QWidget *window, const CommandLine &line) {
    QTimer::singleShot(
        line.screenshotDelay, window,
        [window, file = line.screenshotFile, fleetFile = line.screenshotFleetFile] {
            QWidget *shown = window;
            QString target = file;
            if (!fleetFile.isEmpty()) {
                // The fleet window: --fleet's, or the one the demo opened.
                target = fleetFile;
                for (QWidget *w : QApplication::topLevelWidgets()) {
                    if (w->objectName() == QLatin1String("fleetWindow") && w->isVisible()) {
                        shown = w;
                    }
                }
            }
            if (!shown->grab().save(target)) {
                printErr(QStringLiteral("could not write the screenshot to %1").arg(target));
            }
            window->close();
        });
}

} // namespace

void initResources() {
    initConsoleResources();
}

int runApplication(int argc, char **argv, const DemoFactory &demo) {
    QStringList arguments;
    for (int i = 0; i < argc; ++i) {
        arguments << QString::fromLocal8Bit(argv[i]);
    }
    const auto parsed = parseCommandLine(arguments);
    if (!parsed) {
        return usageError(argc, argv, parsed.errorMessage());
    }
    const CommandLine &line = parsed.value();
    if (line.help) {
        std::fputs(qPrintable(commandLineHelp()), stdout);
        return 0;
    }
    if (line.version) {
        std::fputs("outbox-console " OUTBOX_VERSION "\n", stdout);
        return 0;
    }
    if (line.demo && !demo) {
        // Demo mode is the demo program's: it runs in place of this one.
        return usageError(argc, argv, execDemoProgram(arguments.mid(1)));
    }

    // A fleet file that does not parse is a usage error, also without a display.
    std::optional<QList<store::FleetEntry>> fleetEntries;
    if (!line.fleetFile.isEmpty()) {
        auto entries = store::readFleetFile(line.fleetFile);
        if (!entries) {
            return usageError(argc, argv, entries.errorMessage());
        }
        fleetEntries = entries.value();
    }

    QApplication app(argc, argv);
    setUpApplication();
    QSettings qsettings;
    ConsoleSettings settings(&qsettings);

    std::optional<core::ConnInfo> target = line.connInfo;
    QString profileName;
    if (!line.profile.isEmpty()) {
        const auto profile = settings.profile(line.profile);
        if (!profile) {
            QStringList names;
            for (const auto &p : settings.profiles()) {
                names << p.name;
            }
            return usageError(argc, argv,
                              names.isEmpty()
                                  ? QStringLiteral("there is no connection profile \"%1\"; save "
                                                   "one in the connection dialog first")
                                        .arg(line.profile)
                                  : QStringLiteral("there is no connection profile \"%1\"; saved "
                                                   "profiles: %2")
                                        .arg(line.profile, names.join(QLatin1String(", "))));
        }
        auto info = profile->toConnInfo();
        if (!info) {
            return usageError(argc, argv,
                              QStringLiteral("the connection profile \"%1\" is not valid: %2")
                                  .arg(line.profile, info.errorMessage()));
        }
        target = info.value();
        profileName = line.profile;
    }

    MainWindowOptions options;
    options.readOnly = line.readOnly;
    options.demo = demo;
    if (fleetEntries) {
        FleetWindow fleet(&settings, FleetWindow::withProfiles(*fleetEntries, settings), options);
        fleet.show();
        if (!line.screenshotFile.isEmpty() || !line.screenshotFleetFile.isEmpty()) {
            scheduleScreenshot(&fleet, line);
        }
        return app.exec();
    }
    MainWindow window(&settings, options);
    if (target) {
        window.connectTo(*target, profileName);
    } else if (line.demo) {
        window.startDemo();
    } else {
        ConnectionDialog dialog(&settings);
        if (dialog.exec() != QDialog::Accepted) {
            return 0;
        }
        if (dialog.demoRequested()) {
            if (window.startDemo() == DemoStart::InDemoProgram) {
                return 0;
            }
        } else {
            window.connectTo(dialog.connInfo().value(), dialog.profileName());
        }
    }
    window.show();
    if (!line.screenshotFile.isEmpty() || !line.screenshotFleetFile.isEmpty()) {
        scheduleScreenshot(&window, line);
    }
    return app.exec();
}

} // namespace outbox::console
