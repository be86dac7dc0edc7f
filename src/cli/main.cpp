#include "cli/cli.h"
#include "core/localtimezone.h"

#include <QCoreApplication>

int main(int argc, char *argv[]) {
    outbox::core::pinLocalTimeZone();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("outboxctl"));
    return outbox::cli::run(QCoreApplication::arguments());
}
