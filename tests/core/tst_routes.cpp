// The routes file (core/routes.h): first match, globs, and every problem
// reported with its line and the fix.

#include "core/routes.h"

#include <QtTest>

using namespace outbox;

namespace {

const QString kGood = QStringLiteral("# billing first\n"
                                     "[destination billing-hooks]\n"
                                     "kind = http\n"
                                     "url = https://billing.internal/hooks\n"
                                     "max-attempts = 20\n"
                                     "backoff = 1s..10m\n"
                                     "mode = batch\n"
                                     "concurrency = 8\n"
                                     "rate = 200/s\n"
                                     "\n"
                                     "[destination rest]\n"
                                     "kind = http\n"
                                     "url = http://localhost:8080/events\n"
                                     "[route]\n"
                                     "namespace = billing\n"
                                     "topic = invoice.*\n"
                                     "destination = billing-hooks\n"
                                     "[route]\n"
                                     "destination = rest\n");

} // namespace

class TestRoutes : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void firstMatchWins() {
        QList<core::RoutesError> errors;
        const core::Routes routes = core::Routes::parse(kGood, errors);
        QVERIFY(errors.isEmpty());
        QCOMPARE(routes.destinations.size(), 2);
        const core::Destination *hooks = routes.destination(QStringLiteral("billing-hooks"));
        QVERIFY(hooks);
        QCOMPARE(hooks->maxAttempts, 20);
        QCOMPARE(hooks->baseDelay, core::Millis(1000));
        QCOMPARE(hooks->maxDelay, core::Millis(600000));
        QCOMPARE(hooks->delivery, core::Delivery::Batch);
        QCOMPARE(hooks->rate, 200.0);
        QCOMPARE(hooks->property(QStringLiteral("url")),
                 QStringLiteral("https://billing.internal/hooks"));
        QCOMPARE(
            routes.routeFor(QStringLiteral("billing"), QStringLiteral("invoice.paid"))->destination,
            QStringLiteral("billing-hooks"));
        QCOMPARE(routes.routeFor(QStringLiteral("billing"), QStringLiteral("refund"))->destination,
                 QStringLiteral("rest"));
        QCOMPARE(routes.routeFor(QStringLiteral("billingx"), QStringLiteral("invoice.paid"))
                     ->destination,
                 QStringLiteral("rest"));
        QVERIFY(routes.routes.last().isCatchAll());
    }

    void globsAndLike() {
        QVERIFY(core::globMatches(QStringLiteral("inv*.p?id"), QStringLiteral("invoice.paid")));
        QVERIFY(!core::globMatches(QStringLiteral("inv*.p?id"), QStringLiteral("invoice.pad")));
        QVERIFY(core::globMatches(QStringLiteral("*"), QString()));
        QVERIFY(!core::globMatches(QStringLiteral("a"), QStringLiteral("A")));
        QCOMPARE(core::globToLike(QStringLiteral("a_b%c\\*?")), QStringLiteral("a\\_b\\%c\\\\%_"));
    }

    void errorsCarryTheirLine() {
        QList<core::RoutesError> errors;
        core::Routes::parse(QStringLiteral("stray = 1\n"          // 1
                                           "[destination a]\n"    // 2
                                           "kind = htp\n"         // 3
                                           "password = hunter2\n" // 4
                                           "rate = fast\n"        // 5
                                           "backoff = 5m..1s\n"   // 6
                                           "[route]\n"            // 7
                                           "destination = b\n"    // 8
                                           "[route]\n"            // 9
                                           "namespace = x\n"      // 10
                                           "destination = a\n"    // 11
                                           "[wat]\n"),            // 12
                            errors);
        QStringList lines;
        for (const core::RoutesError &error : errors)
            lines << QStringLiteral("%1: %2").arg(error.line).arg(error.message);
        const QString all = lines.join(QLatin1Char('\n'));
        const auto has = [&](int line, const char *text) {
            for (const core::RoutesError &error : errors) {
                if (error.line == line && error.message.contains(QLatin1String(text)))
                    return true;
            }
            return false;
        };
        QVERIFY2(has(1, "before any section"), qPrintable(all));
        QVERIFY2(has(2, "has no kind; add kind = http"), qPrintable(all));
        QVERIFY2(has(3, "use http or kafka"), qPrintable(all));
        QVERIFY2(has(4, "password-file = PATH"), qPrintable(all));
        QVERIFY2(has(5, "rate = 200/s"), qPrintable(all));
        QVERIFY2(has(6, "backoff = 1s..5m"), qPrintable(all));
        QVERIFY2(has(7, "'b' is not defined"), qPrintable(all));
        QVERIFY2(has(9, "never used: the route on line 7"), qPrintable(all));
        QVERIFY2(has(12, "use [destination NAME] or [route]"), qPrintable(all));
        QCOMPARE(core::routesErrorText(QStringLiteral("x.routes"), {{4, QStringLiteral("m")}}),
                 QStringLiteral("x.routes:4: m"));
    }

    void httpSettingsAreChecked() {
        QList<core::RoutesError> errors;
        core::Routes routes = core::Routes::parse(
            QStringLiteral("[destination a]\nkind = http\nurl = ftp://x/y\ncolour = red\n"
                           "[route]\ndestination = a\n"),
            errors);
        QVERIFY(errors.isEmpty());
        const auto http = core::checkHttpDestination(routes.destinations.first(), {});
        QCOMPARE(http.size(), 1);
        QCOMPARE(http.first().line, 4);
        QVERIFY(http.first().message.contains(QLatin1String("'colour' is not a setting")));
        routes.destinations.first().properties.removeLast();
        const auto url = core::checkHttpDestination(routes.destinations.first(), {});
        QCOMPARE(url.size(), 1);
        QCOMPARE(url.first().line, 3);
        QVERIFY(url.first().message.contains(QLatin1String("not an http or https URL")));
    }

    // The dispatcher's limits cover every destination.
    void applyRoutesSizesTheDispatcher() {
        QList<core::RoutesError> errors;
        core::Routes routes = core::Routes::parse(kGood, errors);
        core::DispatcherConfig config;
        config.maxAttempts = 10;
        config.concurrency = 64;
        QVERIFY(core::applyRoutes(config, routes, QStringLiteral("x")).ok());
        QCOMPARE(config.maxAttempts, 20);
        QCOMPARE(config.concurrency, 8 * 100 + 64); // batch: 8 requests of up to 100 events
        QVERIFY(config.validate().ok());
        QCOMPARE(config.routes->destination(QStringLiteral("rest"))->maxAttempts, 10);
    }
};

QTEST_GUILESS_MAIN(TestRoutes)
#include "tst_routes.moc"
