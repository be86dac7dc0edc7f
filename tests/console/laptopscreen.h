#pragma once

// A laptop's screen for a window test: the offscreen platform with one
// screen of 1366x768 and window frames on. Called in main() before the
// QApplication; the configuration file lives in `dir`.

#include <QFile>
#include <QTemporaryDir>

namespace outbox::testing {

inline bool useLaptopScreen(const QTemporaryDir &dir) {
    const QString config = dir.filePath(QStringLiteral("screen.json"));
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(R"({"windowFrameMargins": true, "screens": [{"name": "laptop",)"
                   R"( "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96,)"
                   R"( "logicalBaseDpi": 96, "dpr": 1}]})") < 0)
        return false;
    file.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    return true;
}

} // namespace outbox::testing
