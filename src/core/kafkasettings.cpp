#include "core/kafkasettings.h"

#include <QFile>
#include <QSet>
#include <QStringList>

namespace outbox::core {

namespace {

Error invalid(const QString &message) {
    return Error{ErrorKind::Invalid, message};
}

constexpr qsizetype MaxTopicLength = 249;
const QLatin1String kPassThrough("kafka.");

// librdkafka properties the publisher sets itself: the guarantee (an
// idempotent producer, acks from every in-sync replica, a delivery report
// before the lease ends) must not be configurable away.
bool reservedProperty(const QString &name, QString *fix) {
    static const QSet<QString> guarantee = {QStringLiteral("enable.idempotence"),
                                            QStringLiteral("acks"),
                                            QStringLiteral("request.required.acks"),
                                            QStringLiteral("message.timeout.ms"),
                                            QStringLiteral("delivery.timeout.ms"),
                                            QStringLiteral("dr_msg_cb"),
                                            QStringLiteral("dr_cb")};
    if (guarantee.contains(name)) {
        *fix = QStringLiteral("the dispatcher sets it (an idempotent producer, acks=all, a "
                              "message timeout of --request-timeout); leave it out");
        return true;
    }
    if (name == QLatin1String("bootstrap.servers") ||
        name == QLatin1String("metadata.broker.list")) {
        *fix = QStringLiteral("give the broker list as brokers = host:port,... instead");
        return true;
    }
    if (name.endsWith(QLatin1String("password")) || name.endsWith(QLatin1String("secret"))) {
        *fix = name == QLatin1String("sasl.password")
                   ? QStringLiteral("a password is never written in the settings or on the "
                                    "command line; put it in a file readable only by the "
                                    "dispatcher and give sasl.password-file = FILE (or "
                                    "sasl.password-env = VARIABLE)")
                   : QStringLiteral("a secret is never written in the settings or on the command "
                                    "line; use an unencrypted key file readable only by the "
                                    "dispatcher instead");
        return true;
    }
    return false;
}

Result<QString> readPasswordFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return invalid(QStringLiteral("sasl.password-file: cannot read \"%1\" (%2); give a file "
                                      "whose first line is the SASL password")
                           .arg(path, file.errorString()));
    const QString password = QString::fromUtf8(file.readLine()).trimmed();
    if (password.isEmpty())
        return invalid(QStringLiteral("sasl.password-file: the first line of \"%1\" is empty; "
                                      "put the SASL password on it")
                           .arg(path));
    return password;
}

Result<QString> readPasswordVariable(const QString &name) {
    const QString password = qEnvironmentVariable(name.toLocal8Bit().constData()).trimmed();
    if (password.isEmpty())
        return invalid(QStringLiteral("sasl.password-env: the environment variable %1 is not set "
                                      "or empty; set it to the SASL password")
                           .arg(name));
    return password;
}

Result<bool> parseFlag(const QString &name, const QString &value) {
    const QString text = value.trimmed().toLower();
    if (text.isEmpty() || text == QLatin1String("true") || text == QLatin1String("yes"))
        return true;
    if (text == QLatin1String("false") || text == QLatin1String("no"))
        return false;
    return invalid(
        QStringLiteral("%1 = \"%2\" is not true or false; give %1 = true").arg(name, value));
}

} // namespace

bool KafkaSettings::isValidTopicName(QStringView name) {
    return topicNameProblem(name).isEmpty();
}

QString KafkaSettings::topicNameProblem(QStringView name) {
    if (name.isEmpty())
        return QStringLiteral("a Kafka topic name cannot be empty");
    if (name.size() > MaxTopicLength)
        return QStringLiteral("a Kafka topic name has at most 249 characters");
    if (name == u"." || name == u"..")
        return QStringLiteral("\".\" and \"..\" are not Kafka topic names");
    for (const QChar c : name) {
        const bool allowed = (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') ||
                             (c >= u'0' && c <= u'9') || c == u'.' || c == u'_' || c == u'-';
        if (!allowed)
            return QStringLiteral("a Kafka topic name has only letters, digits, '.', '_' and '-'");
    }
    return {};
}

Result<KafkaSettings> KafkaSettings::fromProperties(const QList<QPair<QString, QString>> &props) {
    KafkaSettings settings;
    QString passwordFile;
    QString passwordVariable;
    QSet<QString> seen;
    for (const auto &[rawName, rawValue] : props) {
        const QString name = rawName.trimmed();
        const QString value = rawValue.trimmed();
        if (seen.contains(name))
            return invalid(QStringLiteral("%1 is given twice; keep one").arg(name));
        seen.insert(name);
        if (name == QLatin1String("brokers")) {
            settings.brokers = value;
        } else if (name == QLatin1String("topic")) {
            if (const QString problem = topicNameProblem(value); !problem.isEmpty())
                return invalid(QStringLiteral("topic = \"%1\": %2; give e.g. topic = outbox.events")
                                   .arg(value, problem));
            settings.topic = value;
        } else if (name == QLatin1String("topic-from-event")) {
            auto flag = parseFlag(name, value);
            if (!flag)
                return flag.error();
            settings.topicFromEvent = flag.value();
        } else if (name == QLatin1String("sasl.password-file")) {
            passwordFile = value;
        } else if (name == QLatin1String("sasl.password-env")) {
            passwordVariable = value;
        } else if (name.startsWith(kPassThrough) && name.size() > kPassThrough.size()) {
            const QString property = name.mid(kPassThrough.size());
            if (QString fix; reservedProperty(property, &fix))
                return invalid(QStringLiteral("%1 cannot be set: %2").arg(name, fix));
            settings.properties.append({property, value});
        } else {
            return invalid(QStringLiteral("\"%1\" is not a Kafka setting; use brokers, topic, "
                                          "topic-from-event, sasl.password-file, "
                                          "sasl.password-env or kafka.<librdkafka property>")
                               .arg(name));
        }
    }
    if (settings.brokers.isEmpty())
        return invalid(QStringLiteral("brokers is missing; give the bootstrap servers, e.g. "
                                      "brokers = kafka-1:9092,kafka-2:9092"));
    if (settings.topicFromEvent == !settings.topic.isEmpty())
        return invalid(
            settings.topicFromEvent
                ? QStringLiteral("both topic and topic-from-event are given; keep one")
                : QStringLiteral("no Kafka topic: give topic = NAME, or topic-from-event = true "
                                 "to use each event's topic"));
    if (!passwordFile.isEmpty() && !passwordVariable.isEmpty())
        return invalid(
            QStringLiteral("both sasl.password-file and sasl.password-env are given; keep one"));
    if (!passwordFile.isEmpty() || !passwordVariable.isEmpty()) {
        auto password = passwordFile.isEmpty() ? readPasswordVariable(passwordVariable)
                                               : readPasswordFile(passwordFile);
        if (!password)
            return password.error();
        settings.saslPassword = password.value();
    }
    return settings;
}

QString KafkaSettings::describe() const {
    QStringList parts{QStringLiteral("brokers=") + brokers,
                      topicFromEvent ? QStringLiteral("topic=(the event's)")
                                     : QStringLiteral("topic=") + topic};
    for (const auto &[name, value] : properties)
        parts << name + u'=' + value;
    if (!saslPassword.isEmpty())
        parts << QStringLiteral("sasl.password=***");
    return parts.join(u' ');
}

} // namespace outbox::core
