// Display panel: the slice's histogram with the window on it, the window's
// low and high values (in the value unit) and the colormap; with the
// actions View ▸ Automatic Window, View ▸ Colormap and View ▸ Values. It shows what the
// main window applies (setWindow, setColormap) and says what the user asks
// for (its signals); the slice view and the worker are the window's.
#pragma once

#include "panels/panel.h"
#include "views/value_unit.h"

#include <QList>

QT_BEGIN_NAMESPACE
class QAction;
class QActionGroup;
class QComboBox;
class QDoubleSpinBox;
QT_END_NAMESPACE

namespace tomo::ui {

class HistogramWidget;

class DisplayPanel : public Panel {
    Q_OBJECT
public:
    explicit DisplayPanel(QWidget* parent = nullptr);

    HistogramWidget* histogram() const { return m_histogram; }
    /// Checkable: the window from the percentiles of each new slice.
    QAction* autoWindowAction() const { return m_autoWindow; }
    /// One checkable action per colormap (View ▸ Colormap).
    QList<QAction*> colormapActions() const;
    /// One checkable action per value unit (View ▸ Values): attenuation per
    /// pixel, or with the dataset's pixel size per mm or per cm.
    QList<QAction*> valueUnitActions() const;

    /// Shows the window in effect (stored values); emits nothing.
    void setWindow(float low, float high);
    /// Shows the colormap in effect; emits nothing.
    void setColormap(const QString& name);
    /// Shows the unit in effect; per mm and per cm are greyed (with the
    /// reason) while the pixel size is not known. Emits nothing.
    void setValueUnit(const ValueUnit& unit, bool pixelSizeKnown);

signals:
    /// The low or high value typed (stored values, not the unit shown).
    void lowEdited(float low);
    void highEdited(float high);
    /// The window dragged on the histogram.
    void windowDragged(float low, float high);
    void colormapChosen(const QString& name);
    void valueUnitChosen(tomo::ui::ValueUnitKind kind);

private:
    HistogramWidget* m_histogram = nullptr;
    QComboBox* m_colormapCombo = nullptr;
    QDoubleSpinBox* m_lowSpin = nullptr;
    QDoubleSpinBox* m_highSpin = nullptr;
    QAction* m_autoWindow = nullptr;
    QActionGroup* m_colormaps = nullptr;
    QActionGroup* m_units = nullptr;
    ValueUnit m_unit;
};

} // namespace tomo::ui
