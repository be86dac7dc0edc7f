#include "bench/report.h"

#include "bench/harness.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSysInfo>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace outbox::bench {

Check Check::ratio(const QString &name, double fraction, double least) {
    return {name, percent(fraction), QStringLiteral(">= %1%").arg(qRound(least * 100)),
            fraction >= least};
}

bool allPass(const QList<Check> &checks) {
    return std::all_of(checks.begin(), checks.end(), [](const Check &c) { return c.pass; });
}

void printChecks(QTextStream &out, const QList<Check> &checks, const QStringList &header) {
    qsizetype widths[3] = {header.value(0).size(), header.value(1).size(), header.value(2).size()};
    for (const Check &c : checks) {
        widths[0] = std::max(widths[0], c.name.size());
        widths[1] = std::max(widths[1], c.value.size());
        widths[2] = std::max(widths[2], c.target.size());
    }
    const auto row = [&](const QString &name, const QString &value, const QString &target,
                         const QString &verdict) {
        const QString line = name.leftJustified(widths[0]) + QStringLiteral("  ") +
                             value.rightJustified(widths[1]) + QStringLiteral("  ") +
                             target.leftJustified(widths[2]) + QStringLiteral("  ") + verdict;
        out << line.trimmed() << '\n';
    };
    row(header.value(0), header.value(1), header.value(2), header.value(3));
    for (const Check &c : checks)
        row(c.name, c.value, c.target, c.pass ? QStringLiteral("PASS") : QStringLiteral("FAIL"));
}

namespace {

QString valueText(const QJsonValue &value) {
    if (value.isDouble()) // to a thousandth, without trailing zeros
        return QString::number(rounded(value.toDouble(), 3), 'f', 3)
            .remove(QRegularExpression(QStringLiteral("\\.?0+$")));
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    if (value.isArray()) {
        QStringList parts;
        const QJsonArray array = value.toArray();
        for (const QJsonValue &item : array)
            parts << valueText(item);
        return parts.join(QLatin1Char(' '));
    }
    return value.toVariant().toString();
}

void flatten(const QString &prefix, const QJsonObject &json, QList<QStringList> &rows) {
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = prefix + it.key();
        const QJsonArray array = it.value().toArray();
        if (it.value().isObject())
            flatten(key + QLatin1Char('.'), it.value().toObject(), rows);
        else if (!array.isEmpty() && array.first().isObject()) // one object per row
            for (qsizetype i = 0; i < array.size(); ++i)
                flatten(key + QStringLiteral(".%1.").arg(i), array.at(i).toObject(), rows);
        else
            rows << QStringList{key, valueText(it.value())};
    }
}

} // namespace

void printFigures(QTextStream &out, const QJsonObject &json, const QStringList &skip) {
    QJsonObject shown = json;
    for (const QString &key : skip)
        shown.remove(key);
    QList<QStringList> rows;
    flatten(QString(), shown, rows);
    qsizetype width = 0;
    for (const QStringList &row : std::as_const(rows))
        width = std::max(width, row.first().size());
    for (const QStringList &row : std::as_const(rows))
        out << row.first().leftJustified(width) << "  " << row.last() << '\n';
}

QJsonArray checksJson(const QList<Check> &checks, const QString &nameKey, const QString &valueKey) {
    QJsonArray array;
    for (const Check &c : checks) {
        array.append(QJsonObject{{nameKey, c.name},
                                 {valueKey, c.value},
                                 {QStringLiteral("target"), c.target},
                                 {QStringLiteral("pass"), c.pass}});
    }
    return array;
}

QJsonObject machineJson(const QString &serverVersion, QJsonObject run) {
    run.insert(QStringLiteral("date"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    run.insert(QStringLiteral("cpus"), QThread::idealThreadCount());
    run.insert(QStringLiteral("cpu_model"), cpuModel());
    run.insert(QStringLiteral("kernel"), QSysInfo::kernelVersion());
    run.insert(QStringLiteral("os"), QSysInfo::prettyProductName());
    run.insert(QStringLiteral("qt"), QString::fromLatin1(qVersion()));
    run.insert(QStringLiteral("postgresql"), serverVersion);
    return run;
}

QString describeMachine(const QJsonObject &machine) {
    const auto text = [&machine](const char *key) {
        return machine.value(QLatin1String(key)).toString();
    };
    return QStringLiteral("%1 CPUs (%2), %3, Qt %4, PostgreSQL %5")
        .arg(QString::number(machine.value(QLatin1String("cpus")).toInt()), text("cpu_model"),
             text("os"), text("qt"), text("postgresql"));
}

double rounded(double value, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

QJsonObject roundsJson(const Rounds &rounds) {
    QJsonObject json;
    for (auto it = rounds.cbegin(); it != rounds.cend(); ++it) {
        const int decimals = it.key().endsWith(QLatin1String("_per_s")) ? 0 : 3;
        json.insert(it.key(), rounded(median(it.value()), decimals));
        json.insert(it.key() + QStringLiteral("_rounds"), roundedArray(it.value(), decimals));
    }
    return json;
}

QJsonArray roundedArray(const QList<double> &values, int decimals) {
    QJsonArray array;
    for (double value : values)
        array.append(rounded(value, decimals));
    return array;
}

QString ms(double value, int decimals) {
    return QString::number(value, 'f', decimals) + QStringLiteral(" ms");
}

QString percent(double fraction) {
    return QString::number(fraction * 100.0, 'f', 1) + QLatin1Char('%');
}

} // namespace outbox::bench
