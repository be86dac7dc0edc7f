#pragma once

#include <QJsonArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>

// The report of both benchmarks: each figure with its target and verdict,
// as a table for people and as JSON.
namespace outbox::bench {

struct Check {
    QString name;   // "database only / database ceiling"
    QString value;  // "92.1%"
    QString target; // ">= 80%"
    bool pass = false;
};

bool allPass(const QList<Check> &checks);
// The verdict table under `header` (name, value, target, verdict columns).
void printChecks(QTextStream &out, const QList<Check> &checks, const QStringList &header);
// [{nameKey, valueKey, "target", "pass"}, ...]
QJsonArray checksJson(const QList<Check> &checks, const QString &nameKey, const QString &valueKey);

double rounded(double value, int decimals);
QJsonArray roundedArray(const QList<double> &values, int decimals);
QString ms(double value, int decimals);
QString percent(double fraction);

} // namespace outbox::bench
