#include "core/routes.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QStringBuilder>

#include <algorithm>
#include <climits>

namespace outbox::core {

namespace {

constexpr int kMostCount = 1000000;

const QString kExample = QStringLiteral("[route] namespace = billing topic = invoice.* "
                                        "destination = billing-hooks");

// The settings every destination has, whatever its kind.
enum class Common { Kind, MaxAttempts, Backoff, Mode, Concurrency, Rate, Failures, OpenFor };
const QList<QPair<QString, Common>> kCommonKeys = {
    {QStringLiteral("kind"), Common::Kind},
    {QStringLiteral("max-attempts"), Common::MaxAttempts},
    {QStringLiteral("backoff"), Common::Backoff},
    {QStringLiteral("mode"), Common::Mode},
    {QStringLiteral("concurrency"), Common::Concurrency},
    {QStringLiteral("rate"), Common::Rate},
    {QStringLiteral("circuit-failures"), Common::Failures},
    {QStringLiteral("circuit-open"), Common::OpenFor},
};

bool validName(const QString &name) {
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9._-]{1,100}$"));
    return pattern.match(name).hasMatch();
}

// A setting that would put a secret into the file.
bool looksSecret(const QString &key) {
    const QString lower = key.toLower();
    if (lower.endsWith(QLatin1String("-file")) || lower.endsWith(QLatin1String("-env")) ||
        lower.endsWith(QLatin1String(".location")))
        return false;
    return lower.endsWith(QLatin1String("password")) || lower.endsWith(QLatin1String("secret")) ||
           lower.endsWith(QLatin1String("token"));
}

std::optional<int> positiveCount(const QString &value) {
    bool ok = false;
    const int n = value.toInt(&ok);
    if (!ok || n < 1 || n > kMostCount)
        return std::nullopt;
    return n;
}

class Parser {
public:
    Parser(Routes &routes, QList<RoutesError> &errors)
        : m_routes(routes)
        , m_errors(errors) {}

    void line(int number, const QString &raw) {
        const QString text = raw.trimmed();
        if (text.isEmpty() || text.startsWith(QLatin1Char('#')) ||
            text.startsWith(QLatin1Char(';')))
            return;
        if (text.startsWith(QLatin1Char('[')))
            return section(number, text);
        const qsizetype equals = text.indexOf(QLatin1Char('='));
        if (equals <= 0)
            return error(number, QStringLiteral("'%1' is not a setting; write key = value, a "
                                                "[destination NAME] or [route] header, or a "
                                                "comment starting with #")
                                     .arg(text.left(60)));
        const QString key = text.left(equals).trimmed();
        const QString value = text.mid(equals + 1).trimmed();
        if (m_section == Section::None)
            return error(number, QStringLiteral("'%1' comes before any section; put it under a "
                                                "[destination NAME] or [route] header")
                                     .arg(key));
        if (!m_keys.contains(key))
            m_keys.insert(key);
        else
            return error(number,
                         QStringLiteral("'%1' is given twice in this section; keep one").arg(key));
        if (value.isEmpty())
            return error(number, QStringLiteral("'%1' has no value; write %1 = VALUE or remove "
                                                "the line")
                                     .arg(key));
        if (m_section == Section::Route)
            routeSetting(number, key, value);
        else
            destinationSetting(number, key, value);
    }

    void finish() {
        QSet<QString> used;
        const Route *catchAll = nullptr;
        for (const Route &route : std::as_const(m_routes.routes)) {
            if (route.destination.isEmpty()) {
                error(route.line, QStringLiteral("this [route] names no destination; add "
                                                 "destination = NAME"));
                continue;
            }
            if (!m_routes.destination(route.destination)) {
                error(route.line,
                      QStringLiteral("the route's destination '%1' is not defined; add a "
                                     "[destination %1] section or fix the name")
                          .arg(route.destination));
            }
            used.insert(route.destination);
            if (catchAll) {
                error(route.line,
                      QStringLiteral("this route is never used: the route on line %1 matches "
                                     "every event first; move the catch-all to the end")
                          .arg(catchAll->line));
            } else if (route.isCatchAll()) {
                catchAll = &route;
            }
        }
        for (const Destination &destination : std::as_const(m_routes.destinations)) {
            if (destination.kind.isEmpty())
                error(destination.line,
                      QStringLiteral("destination '%1' has no kind; add kind = http (or kafka)")
                          .arg(destination.name));
            if (!used.contains(destination.name))
                error(destination.line,
                      QStringLiteral("no route uses destination '%1'; add a [route] with "
                                     "destination = %1, or remove the section")
                          .arg(destination.name));
        }
        if (m_routes.routes.isEmpty())
            error(0, QStringLiteral("the file has no [route]; add one, e.g. ") % kExample);
    }

private:
    enum class Section { None, Destination, Route };

    void error(int number, const QString &message) { m_errors.append({number, message}); }

    void section(int number, const QString &text) {
        m_keys.clear();
        if (!text.endsWith(QLatin1Char(']'))) {
            m_section = Section::None;
            return error(number, QStringLiteral("the header '%1' has no closing ]; write "
                                                "[destination NAME] or [route]")
                                     .arg(text.left(60)));
        }
        const QStringList words =
            text.mid(1, text.size() - 2).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (words.size() == 1 && words.first() == QLatin1String("route")) {
            m_section = Section::Route;
            Route route;
            route.line = number;
            m_routes.routes.append(route);
            return;
        }
        if (words.size() == 2 && words.first() == QLatin1String("destination")) {
            m_section = Section::Destination;
            const QString &name = words.at(1);
            if (!validName(name))
                error(number, QStringLiteral("'%1' is not a destination name; use letters, "
                                             "digits, '.', '_' and '-', e.g. billing-hooks")
                                  .arg(name.left(60)));
            else if (const Destination *earlier = m_routes.destination(name))
                error(number, QStringLiteral("destination '%1' is already defined on line %2; "
                                             "rename one of them")
                                  .arg(name)
                                  .arg(earlier->line));
            Destination destination;
            destination.name = name;
            destination.line = number;
            m_routes.destinations.append(destination);
            return;
        }
        m_section = Section::None;
        error(number, QStringLiteral("'%1' is not a section; use [destination NAME] or [route]")
                          .arg(text.left(60)));
    }

    void routeSetting(int number, const QString &key, const QString &value) {
        Route &route = m_routes.routes.last();
        if (key == QLatin1String("namespace"))
            route.nameSpace = value;
        else if (key == QLatin1String("topic"))
            route.topic = value;
        else if (key == QLatin1String("destination"))
            route.destination = value;
        else
            error(number, QStringLiteral("'%1' is not a route setting; a [route] has namespace, "
                                         "topic and destination")
                              .arg(key));
    }

    void destinationSetting(int number, const QString &key, const QString &value) {
        Destination &destination = m_routes.destinations.last();
        const auto common = std::find_if(kCommonKeys.cbegin(), kCommonKeys.cend(),
                                         [&key](const auto &known) { return known.first == key; });
        if (common == kCommonKeys.cend()) {
            if (looksSecret(key))
                return error(number,
                             QStringLiteral("'%1' would put a secret into the routes file; put "
                                            "it in a file only the dispatcher can read and give "
                                            "%1-file = PATH instead")
                                 .arg(key));
            destination.properties.append({key, value});
            destination.propertyLines.append(number);
            return;
        }
        const auto count = [&](std::optional<int> &target, const char *example) {
            if (const auto n = positiveCount(value))
                target = n;
            else
                error(number, QStringLiteral("%1 = %2 is not a count from 1 to %3; use e.g. "
                                             "%1 = %4")
                                  .arg(key, value.left(40))
                                  .arg(kMostCount)
                                  .arg(QLatin1String(example)));
        };
        switch (common->second) {
        case Common::Kind:
            if (value != Routes::kindHttp() && value != Routes::kindKafka())
                return error(number, QStringLiteral("kind = %1 is not a destination kind; use "
                                                    "http or kafka")
                                         .arg(value.left(40)));
            destination.kind = value;
            return;
        case Common::MaxAttempts:
            return count(destination.maxAttempts, "10");
        case Common::Concurrency:
            return count(destination.concurrency, "16");
        case Common::Failures: {
            std::optional<int> failures;
            count(failures, "5");
            destination.circuitFailures = failures.value_or(destination.circuitFailures);
            return;
        }
        case Common::Mode:
            if (value == QLatin1String("event") || value == QLatin1String("per-event"))
                destination.delivery = Delivery::PerEvent;
            else if (value == QLatin1String("batch"))
                destination.delivery = Delivery::Batch;
            else
                error(number, QStringLiteral("mode = %1 is unknown; use event (one request per "
                                             "event) or batch (many events per request)")
                                  .arg(value.left(40)));
            return;
        case Common::Rate: {
            QString number_ = value;
            if (number_.endsWith(QLatin1String("/s")))
                number_.chop(2);
            bool ok = false;
            const double rate = number_.trimmed().toDouble(&ok);
            if (!ok || rate <= 0 || rate > 1e7)
                return error(number, QStringLiteral("rate = %1 is not a rate; give events per "
                                                    "second, e.g. rate = 200/s (leave it out "
                                                    "for no limit)")
                                         .arg(value.left(40)));
            destination.rate = rate;
            return;
        }
        case Common::Backoff: {
            const QStringList parts = value.split(QStringLiteral(".."));
            const auto base = parseDuration(parts.value(0).trimmed());
            const auto most = parseDuration(parts.value(1).trimmed());
            if (parts.size() != 2 || !base || !most || base->count() < 1 ||
                most.value() < base.value())
                return error(number, QStringLiteral("backoff = %1 is not FIRST..LONGEST; give "
                                                    "the first retry delay and the longest, "
                                                    "e.g. backoff = 1s..5m")
                                         .arg(value.left(40)));
            destination.baseDelay = base.value();
            destination.maxDelay = most.value();
            return;
        }
        case Common::OpenFor: {
            const auto duration = parseDuration(value);
            if (!duration || duration->count() < 1 || duration.value() > kLongestSetting)
                return error(number, QStringLiteral("circuit-open = %1 is not a duration; give "
                                                    "how long an open circuit waits before a "
                                                    "probe, e.g. circuit-open = 30s")
                                         .arg(value.left(40)));
            destination.circuitOpen = duration.value();
            return;
        }
        }
    }

    Routes &m_routes;
    QList<RoutesError> &m_errors;
    Section m_section = Section::None;
    QSet<QString> m_keys; // of the current section
};

} // namespace

QString Destination::property(const QString &key) const {
    for (const auto &[setting, value] : properties) {
        if (setting == key)
            return value;
    }
    return {};
}

bool globMatches(const QString &glob, const QString &text) {
    // Iterative wildcard match: on a mismatch, go back to the last * and let
    // it take one more character.
    qsizetype g = 0, t = 0, star = -1, resume = 0;
    while (t < text.size()) {
        if (g < glob.size() && (glob.at(g) == QLatin1Char('?') || glob.at(g) == text.at(t))) {
            ++g;
            ++t;
        } else if (g < glob.size() && glob.at(g) == QLatin1Char('*')) {
            star = g++;
            resume = t;
        } else if (star >= 0) {
            g = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (g < glob.size() && glob.at(g) == QLatin1Char('*'))
        ++g;
    return g == glob.size();
}

QString globToLike(const QString &glob) {
    QString like;
    like.reserve(glob.size() + 4);
    for (const QChar c : glob) {
        if (c == QLatin1Char('*'))
            like += QLatin1Char('%');
        else if (c == QLatin1Char('?'))
            like += QLatin1Char('_');
        else if (c == QLatin1Char('%') || c == QLatin1Char('_') || c == QLatin1Char('\\'))
            like += QLatin1Char('\\') % c;
        else
            like += c;
    }
    return like;
}

bool Route::matches(const QString &eventNamespace, const QString &eventTopic) const {
    return globMatches(nameSpace, eventNamespace) && globMatches(topic, eventTopic);
}

bool Route::isCatchAll() const {
    const auto everything = [](const QString &glob) {
        return !glob.isEmpty() && std::all_of(glob.cbegin(), glob.cend(),
                                              [](QChar c) { return c == QLatin1Char('*'); });
    };
    return everything(nameSpace) && everything(topic);
}

Routes Routes::parse(const QString &text, QList<RoutesError> &errors) {
    Routes routes;
    Parser parser(routes, errors);
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i)
        parser.line(int(i + 1), lines.at(i));
    parser.finish();
    std::stable_sort(errors.begin(), errors.end(),
                     [](const RoutesError &a, const RoutesError &b) { return a.line < b.line; });
    return routes;
}

Result<Routes> Routes::load(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error{
            ErrorKind::Invalid,
            QStringLiteral("--routes: cannot read '%1': %2").arg(path, file.errorString())};
    QList<RoutesError> errors;
    Routes routes = parse(QString::fromUtf8(file.readAll()), errors);
    if (!errors.isEmpty())
        return Error{ErrorKind::Invalid, routesErrorText(path, errors)};
    return routes;
}

const Route *Routes::routeFor(const QString &eventNamespace, const QString &eventTopic) const {
    for (const Route &route : routes) {
        if (route.matches(eventNamespace, eventTopic))
            return &route;
    }
    return nullptr;
}

const Destination *Routes::destination(const QString &name) const {
    for (const Destination &destination : destinations) {
        if (destination.name == name)
            return &destination;
    }
    return nullptr;
}

QString routesErrorText(const QString &path, const QList<RoutesError> &errors) {
    QStringList lines;
    for (const RoutesError &error : errors)
        lines << (error.line > 0
                      ? QStringLiteral("%1:%2: %3").arg(path).arg(error.line).arg(error.message)
                      : QStringLiteral("%1: %2").arg(path, error.message));
    return lines.join(QLatin1Char('\n'));
}

} // namespace outbox::core
