#include "cli/console.h"

#include <QIODevice>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace outbox::cli {

Console::Console()
    : m_out(stdout, QIODevice::WriteOnly)
    , m_err(stderr, QIODevice::WriteOnly) {}

Console::~Console() {
    flush();
}

void Console::flush() {
    m_out.flush();
    m_err.flush();
}

bool Console::stdinIsTerminal() const {
    return ::isatty(STDIN_FILENO) == 1;
}

bool Console::stdoutIsTerminal() const {
    return ::isatty(STDOUT_FILENO) == 1;
}

QByteArray Console::readAllStdin() {
    QByteArray data;
    char buffer[65536];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0)
        data.append(buffer, qsizetype(n));
    return data;
}

std::optional<QString> Console::readLine() {
    std::string line;
    int c = 0;
    bool any = false;
    while ((c = std::fgetc(stdin)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        line.push_back(char(c));
    }
    if (!any)
        return std::nullopt;
    return QString::fromStdString(line).trimmed();
}

} // namespace outbox::cli
