#pragma once

#include <QJsonArray>
#include <QJsonObject>
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

// `run` (the run's settings) with the machine and versions it measured on:
// date, cpus, cpu_model, kernel, os, qt, postgresql.
// describeMachine() is the line a printed report starts with:
// "2 CPUs (AMD EPYC 7B13), Debian GNU/Linux 12, Qt 6.4.2, PostgreSQL 15.18".
QJsonObject machineJson(const QString &serverVersion, QJsonObject run);
QString describeMachine(const QJsonObject &machine);

double rounded(double value, int decimals);
QJsonArray roundedArray(const QList<double> &values, int decimals);
QString ms(double value, int decimals);
QString percent(double fraction);

} // namespace outbox::bench
