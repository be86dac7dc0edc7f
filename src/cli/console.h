#pragma once

#include <QByteArray>
#include <QString>
#include <QTextStream>

#include <optional>

namespace outbox::cli {

// The process's standard streams. Commands write results to out() and
// diagnostics, prompts and progress to err(), so stdout stays parseable.
class Console final {
public:
    Console();
    ~Console();
    Q_DISABLE_COPY_MOVE(Console)

    QTextStream &out() { return m_out; }
    QTextStream &err() { return m_err; }
    void flush();

    bool stdinIsTerminal() const;
    bool stdoutIsTerminal() const;
    // Reads stdin to the end (payload from a pipe).
    QByteArray readAllStdin();
    // One line from stdin without the newline; nullopt at end of input.
    std::optional<QString> readLine();

private:
    QTextStream m_out;
    QTextStream m_err;
};

} // namespace outbox::cli
