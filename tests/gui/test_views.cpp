// GUI tests of the views (ui/views/): the slice view's window, colormap and
// value units, the profile plot against core's line profile, the histogram
// and automatic window, the shrinking of a slice for the screen, and the
// 3D view's background threshold.
#include "gui_test_support.h"

#include "dialogs/compare_modes_dialog.h"
#include "main_window.h"
#include "panels/parameter_panel.h"
#include "panels/quality_panel.h"
#include "views/colormap.h"
#include "views/histogram_widget.h"
#include "views/profile_plot.h"
#include "views/slice_view.h"

#include "tomo/metrics.h"
#include "tomo/worker_pool.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <cmath>

using namespace tomo::ui;
using namespace tomo::ui::test;

class ViewTests : public WindowTest {
    Q_OBJECT

private slots:

    void profileMatchesCoreLineProfile() {
        openDemo();
        QVERIFY(waitForReference(*w));
        SliceView* view = w->sliceView();
        const auto lineTool = w->findChildren<QAction*>();
        for (QAction* a : lineTool)
            if (a->shortcut() == QKeySequence(Qt::Key_L)) a->trigger();
        QCOMPARE(view->tool(), SliceView::Tool::Line);
        // Drag across the phantom, as a user would.
        const QPoint from = view->toWidget(QPointF(20.0, 140.0)).toPoint();
        const QPoint to = view->toWidget(QPointF(235.0, 110.0)).toPoint();
        QTest::mousePress(view, Qt::LeftButton, {}, from);
        QTest::mouseMove(view, (from + to) / 2);
        QTest::mouseMove(view, to);
        QTest::mouseRelease(view, Qt::LeftButton, {}, to);
        QVERIFY(view->line().has_value());
        const QLineF l = *view->line();
        QVERIFY(l.length() > 150.0);

        const auto expected = tomo::lineProfile(w->currentResult()->preview.slice, l.x1(), l.y1(), l.x2(), l.y2());
        const QList<QPointF> shown = w->profilePlot()->resultPoints();
        QVERIFY(!shown.isEmpty());
        qsizetype i = 0;
        for (const auto& p : expected) {
            if (!std::isfinite(p.value)) continue;
            QVERIFY(i < shown.size());
            QCOMPARE(shown[i].x(), p.distance);
            QCOMPARE(shown[i].y(), p.value);
            ++i;
        }
        QCOMPARE(i, shown.size());
        // Reference overlaid and |difference| below, from the same line.
        const ReferenceResult* ref = w->activeReference();
        QVERIFY(ref);
        const auto refProfile = tomo::lineProfile(ref->image, l.x1(), l.y1(), l.x2(), l.y2());
        const QList<QPointF> refShown = w->profilePlot()->referencePoints();
        const QList<QPointF> diffShown = w->profilePlot()->differencePoints();
        QCOMPARE(refShown.size(), shown.size());
        QCOMPARE(diffShown.size(), shown.size());
        for (qsizetype k = 0; k < diffShown.size(); ++k)
            QVERIFY(std::abs(diffShown[k].y() - std::abs(shown[k].y() - refShown[k].y())) < 1e-12);
        saveScreenshot(w.get(), QStringLiteral("05-profile"));
    }


    void windowLevelAndColormap() {
        openDemo();
        const SliceResult& r = *w->currentResult();
        QCOMPARE(w->sliceView()->windowLow(), r.stats.autoLow);
        QCOMPARE(w->sliceView()->windowHigh(), r.stats.autoHigh);
        // Right drag changes the window and turns the automatic window off.
        SliceView* view = w->sliceView();
        const QPoint c = view->rect().center();
        QTest::mousePress(view, Qt::RightButton, {}, c);
        QTest::mouseMove(view, c + QPoint(60, -40));
        QTest::mouseRelease(view, Qt::RightButton, {}, c + QPoint(60, -40));
        QVERIFY(view->windowHigh() - view->windowLow() > r.stats.autoHigh - r.stats.autoLow);
        QCOMPARE(w->histogram()->stats().finite, r.stats.finite);
        auto* combo = w->findChild<QComboBox*>(QStringLiteral("colormapCombo"));
        QVERIFY(combo);
        combo->setCurrentIndex(combo->findData(QStringLiteral("aurora")));
        QCOMPARE(view->colormapName(), QStringLiteral("aurora"));
        // A new slice keeps the manual window.
        const float lo = view->windowLow();
        setParams([](SliceParams& p) { p.axis += 0.5; });
        QVERIFY(waitForResult(*w, [](const SliceResult& r) { return r.params.axis == 128.0; }));
        QCOMPARE(view->windowLow(), lo);
        saveScreenshot(w.get(), QStringLiteral("06-colormap-window"));
    }


    void newDatasetStartsWithAutomaticWindow() {
        openDemo(128, 4);
        const float low = w->currentResult()->stats.autoLow;
        emit w->histogram()->windowChanged(low, low + 10.0f); // a manual window: automatic goes off
        QCOMPARE(w->sliceView()->windowHigh(), low + 10.0f);
        openDemo(256, 4);
        const SliceResult& r = *w->currentResult();
        QCOMPARE(w->sliceView()->windowLow(), r.stats.autoLow);
        QCOMPARE(w->sliceView()->windowHigh(), r.stats.autoHigh);
        // ... and it stays automatic for the next slices of this dataset.
        setParams([](SliceParams& p) { p.row = 1; });
        QVERIFY(waitForResult(*w, [](const SliceResult& res) { return res.params.row == 1; }));
        QCOMPARE(w->sliceView()->windowHigh(), w->currentResult()->stats.autoHigh);
    }


    void labelsSayTheirUnits() {
        openDemo(128, 4);
        QVERIFY(waitForReference(*w));
        QCOMPARE(w->parameterPanel()->findChild<QLabel*>(QStringLiteral("rowsLabel"))->text(), QStringLiteral("(rows 0–3)"));
        auto* maxAbs = w->qualityPanel()->findChild<QLabel*>(QStringLiteral("maxAbsFigure"));
        auto* relative = w->qualityPanel()->findChild<QLabel*>(QStringLiteral("relativeFigure"));
        QVERIFY(maxAbs->text().endsWith(QStringLiteral(" 1/px")));
        QVERIFY(relative->text().endsWith(QStringLiteral(" %")));
        w->setProfileLine(QLineF(10, 64, 118, 64));
        const double stored = w->profilePlot()->resultPoints().at(20).y();

        // With the pixel size, attenuation per mm: every view in the same unit.
        w->setPixelSize(6.5);
        w->setValueUnitKind(ValueUnitKind::PerMillimetre);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/mm"));
        QVERIFY(maxAbs->text().endsWith(QStringLiteral(" 1/mm")));
        QVERIFY(std::abs(w->profilePlot()->resultPoints().at(20).y() - stored * 1000.0 / 6.5) < 1e-9 * std::abs(stored) * 1000.0);
        auto* low = w->findChild<QDoubleSpinBox*>(QStringLiteral("windowLowSpin"));
        QVERIFY(low);
        QVERIFY(low->suffix().contains(QStringLiteral("1/mm")));
        saveScreenshot(w.get(), QStringLiteral("28-values-per-mm"));
        // Without a pixel size there is no per-mm value: back to per pixel.
        w->setPixelSize(0.0);
        QCOMPARE(w->valueUnit().symbol, QStringLiteral("1/px"));

        // Compare Modes: the relative error in percent there too.
        QSignalSpy finished(w->controller(), &Controller::jobFinished);
        w->compareModes();
        QVERIFY(waitUntil([&] { return finished.count() == 1; }, 180000));
        auto* table = w->compareDialog()->findChild<QTableWidget*>();
        QVERIFY(table && table->rowCount() > 0);
        QCOMPARE(table->horizontalHeaderItem(4)->text(), QStringLiteral("Max abs error (1/px)"));
        QVERIFY(table->item(0, 7)->text().endsWith(QStringLiteral(" %")));
        QVERIFY(w->compareDialog()->toCsv().startsWith(QStringLiteral("strategy,interpolation,precision,exact,"
                                                                       "seconds_backproject,gups,max_abs_error_per_px")));
    }


    void volumeThresholdEndsTheBackground() {
        // A CT volume's histogram: background around 0 (most voxels), a
        // tissue around 0.2 and a few dense voxels around 1.
        // Each population: a triangular spread (two uniform steps added) of ±0.02.
        auto spread = [](int i) { return 0.02f * ((i % 101) / 100.0f + ((i * 37) % 101) / 100.0f - 1.0f); };
        std::vector<float> values;
        for (int i = 0; i < 8000; ++i) values.push_back(spread(i));
        for (int i = 0; i < 3000; ++i) values.push_back(0.2f + spread(i));
        for (int i = 0; i < 500; ++i) values.push_back(1.0f + spread(i));
        const ImageStats stats = computeStats(values);
        const float t = backgroundThreshold(stats);
        QVERIFY2(t > 0.02f && t < 0.18f, qPrintable(QString::number(t))); // between background and tissue
        const TransferFunction tf = automaticTransferFunction(stats);
        QCOMPARE(tf.threshold, t);
        QCOMPARE(tf.high, stats.autoHigh);
        QCOMPARE(backgroundThreshold(ImageStats{}), 0.0f);
    }


    void shrinkForViewAveragesTheAreaItCovers() {
        // Three columns to two: each output pixel covers 1.5 source pixels.
        QImage row(3, 2, QImage::Format_RGB32);
        for (int y = 0; y < 2; ++y) {
            row.setPixel(0, y, qRgb(0, 30, 255));
            row.setPixel(1, y, qRgb(90, 30, 255));
            row.setPixel(2, y, qRgb(180, 30, 255));
        }
        const QImage two = shrinkForView(row, 2.0 / 3.0);
        QCOMPARE(two.size(), QSize(2, 1));
        QCOMPARE(qRed(two.pixel(0, 0)), 30);  // (0 x 1 + 90 x 0.5) / 1.5
        QCOMPARE(qRed(two.pixel(1, 0)), 150); // (90 x 0.5 + 180 x 1) / 1.5
        QCOMPARE(qGreen(two.pixel(1, 0)), 30);
        QCOMPARE(qBlue(two.pixel(0, 0)), 255);
        QVERIFY(shrinkForView(row, 1.0).isNull());
        // A large image: the same on the pool's threads, and close to Qt's smooth scaling.
        QImage big(1024, 768, QImage::Format_RGB32);
        for (int y = 0; y < big.height(); ++y)
            for (int x = 0; x < big.width(); ++x) big.setPixel(x, y, qRgb((x * 7 + y) % 256, (x / 4) % 256, (y * 3) % 256));
        tomo::WorkerPool pool(4);
        const QImage alone = shrinkForView(big, 0.37), threaded = shrinkForView(big, 0.37, &pool);
        QCOMPARE(threaded, alone);
        const QImage qt = big.scaled(alone.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        double difference = 0.0;
        for (int y = 0; y < qt.height(); ++y)
            for (int x = 0; x < qt.width(); ++x) difference += std::abs(qGreen(qt.pixel(x, y)) - qGreen(alone.pixel(x, y)));
        QVERIFY2(difference / (qt.width() * qt.height()) < 3.0, qPrintable(QString::number(difference)));
    }
};

int main(int argc, char** argv) {
    prepareEnvironment(/*offscreenOk=*/true);
    QApplication app(argc, argv);
    initTestApplication();
    ViewTests test;
    return runSuite(test, argc, argv);
}

#include "test_views.moc"
