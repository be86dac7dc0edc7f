#pragma once

#include <QString>

#include <optional>
#include <utility>

namespace outbox::core {

// Why an operation failed; front ends map it to exit codes and wording.
enum class ErrorKind {
    Invalid,          // bad input or configuration: the caller must change something
    Unavailable,      // the database (or another service) could not be reached
    PermissionDenied, // the role lacks a privilege
    // The server refused the login's password, or wanted one it was not
    // given: ask for it; trying again as it is cannot help.
    AuthenticationFailed,
    NotFound,
    Conflict, // e.g. a schema newer than this binary
    Failed,   // anything else
};

struct Error {
    ErrorKind kind = ErrorKind::Failed;
    QString message; // a sentence a person can act on; never contains secrets
};

// A value or an error. Nothing in this project throws across a thread or
// signal boundary: fallible functions return this instead.
template <typename T> class [[nodiscard]] Result {
public:
    Result(T value)
        : m_value(std::move(value)) {}
    Result(Error error)
        : m_error(std::move(error)) {}

    static Result failure(ErrorKind kind, QString message) {
        return Result(Error{kind, std::move(message)});
    }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }

    const T &value() const & { return *m_value; }
    T &value() & { return *m_value; }
    T &&value() && { return std::move(*m_value); }
    const T *operator->() const { return &*m_value; }
    T *operator->() { return &*m_value; }

    const Error &error() const { return m_error; }
    const QString &errorMessage() const { return m_error.message; }
    ErrorKind errorKind() const { return m_error.kind; }

private:
    std::optional<T> m_value;
    Error m_error;
};

template <> class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error)
        : m_ok(false)
        , m_error(std::move(error)) {}

    static Result failure(ErrorKind kind, QString message) {
        return Result(Error{kind, std::move(message)});
    }

    bool ok() const { return m_ok; }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return m_error; }
    const QString &errorMessage() const { return m_error.message; }
    ErrorKind errorKind() const { return m_error.kind; }

private:
    bool m_ok = true;
    Error m_error;
};

} // namespace outbox::core
