#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
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

    // A ratio against its least value: "92.1%", ">= 80%".
    static Check ratio(const QString &name, double fraction, double least);
};

bool allPass(const QList<Check> &checks);
// The verdict table under `header` (name, value, target, verdict columns).
void printChecks(QTextStream &out, const QList<Check> &checks, const QStringList &header);
// Every figure of a JSON report, for people: one "key  value" line each,
// the keys of nested objects joined by '.', an array on one line (an array
// of objects an object per row, by index). The JSON is the one owner of the figures; this is
// how the programs print them without --json. `skip`: top-level keys left out.
void printFigures(QTextStream &out, const QJsonObject &json, const QStringList &skip = {});
// [{nameKey, valueKey, "target", "pass"}, ...]
QJsonArray checksJson(const QList<Check> &checks, const QString &nameKey, const QString &valueKey);

// `run` (the run's settings) with the machine and versions it measured on:
// date, cpus, cpu_model, kernel, os, qt, postgresql.
// describeMachine() is the line a printed report starts with:
// "2 CPUs (AMD EPYC 7B13), Debian GNU/Linux 12, Qt 6.4.2, PostgreSQL 15.18".
QJsonObject machineJson(const QString &serverVersion, QJsonObject run);
QString describeMachine(const QJsonObject &machine);

double rounded(double value, int decimals);
// A phase's figures by name, one value per round ("paused_events_per_s").
using Rounds = QMap<QString, QList<double>>;
// Each figure's median under its name and every round under name + "_rounds":
// rates (names ending in "_per_s") to whole numbers, the rest to 3 decimals.
QJsonObject roundsJson(const Rounds &rounds);
QJsonArray roundedArray(const QList<double> &values, int decimals);
QString ms(double value, int decimals);
QString percent(double fraction);

} // namespace outbox::bench
