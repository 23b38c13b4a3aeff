// Parameter panel: row, rotation axis (spin box + sliders, tilt, automatic
// finder, per-projection offsets file), filter window and padding, strategy
// (from the backend registry; unavailable ones greyed with the reason as
// tooltip; with auto, whether approximate ones may compete), interpolation,
// precision, slices per pass, device, threads,
// region of interest, live update. It holds the corrections too (edited in
// the Corrections panel), so params() is the whole request. Emits
// paramsChanged() on every user change. Its actions: Live Update, Find
// Rotation Axis, and the axis and row steps of the Reconstruction menu.
#pragma once

#include "panels/panel.h"
#include "work/recon_types.h"

#include <QList>

#include <memory>
#include <optional>

namespace Ui {
class ParameterPanel;
}

namespace tomo::ui {

class ParameterPanel : public Panel {
    Q_OBJECT
public:
    explicit ParameterPanel(QWidget* parent = nullptr);
    ~ParameterPanel() override;

    /// Checkable, follows setLiveUpdate(): reconstruct on every change.
    QAction* liveUpdateAction() const { return m_liveAction; }
    /// Runs findAxis().
    QAction* findAxisAction() const { return m_findAxisAction; }
    /// Axis −0.25, +0.25, −0.01, +0.01 px; previous and next row.
    QList<QAction*> stepActions() const { return m_stepActions; }

    /// Why float16 is greyed out in the precision choice (empty: it is offered).
    QString halfPrecisionReason() const;

    /// Adapts ranges to the dataset and resets row (middle), axis (detector
    /// centre, no tilt), offsets, region and corrections (the defaults).
    void setDataset(const DatasetSummary& dataset);
    /// The slice grid the corrections give (360° stitching widens it): the
    /// region's ranges. Emits nothing.
    void setGrid(int size);

    /// Replaces the corrections and emits paramsChanged().
    void setCorrections(const tomo::CorrectionOptions& corrections);
    const tomo::CorrectionOptions& corrections() const { return m_corrections; }
    /// The method (the Method panel edits it; params().options.iterative).
    void setIterative(const tomo::IterativeOptions& iterative);
    /// Sets the axis on the current row (a picked sweep thumbnail) and emits paramsChanged().
    void setAxis(double axis);

    SliceParams params() const;
    /// Sets every control (without emitting per control), then emits
    /// paramsChanged() once. A NaN axis means the detector centre.
    void setParams(const SliceParams& params);
    /// SliceParams::gpus from now on (the last Reconstruct to File's choice).
    void setGpus(const std::string& gpus) { m_gpus = gpus; }

    /// Empty when the strategy accepts the options, else why not.
    QString validationError() const;

    bool liveUpdate() const;
    void setLiveUpdate(bool on);
    void setBusy(bool busy);
    /// Sets the axis found by the finder and shows "found (automatically on
    /// opening), confidence …" until the axis is moved. An automatic one
    /// emits nothing (setParams follows); a manual one emits paramsChanged().
    void setAxisEstimate(const AxisResult& result, bool automatic = false);
    /// The axis on screen is the one the finder found.
    bool axisIsFound() const;
    /// The text next to the finder ("found automatically …, confidence …").
    QString axisNote() const;
    /// Runs the axis finder on the current row (as the "Find automatically"
    /// button does): emits findAxisRequested and shows that it searches.
    void findAxis();
    /// Shows that the finder searches (the opening's search, or the button's).
    void setAxisSearching();
    /// The finder failed (`why`, when known, in the tooltip).
    void setAxisSearchFailed(const QString& why = {});
    void setRegion(const std::optional<tomo::Region>& region);
    /// Steps the axis by `delta` pixels / the row by `delta` rows.
    void nudgeAxis(double delta);
    void stepRow(int delta);

signals:
    void paramsChanged();
    void liveUpdateChanged(bool on);
    void reconstructRequested();
    void cancelRequested();
    void findAxisRequested(int row);
    void drawRegionRequested();
    /// An offsets file could not be read.
    void failed(const QString& title, const QString& message);
    /// setParams() brought other corrections (undo, loaded parameters).
    void correctionsReplaced(const tomo::CorrectionOptions& corrections);
    /// setParams brought another method (a parameter file, undo).
    void iterativeReplaced(const tomo::IterativeOptions& iterative);

private:
    void dockMade() override;
    void createActions();
    void populateChoices();
    void changed();
    void updateValidation();
    void setAxisControls(double axis);
    /// With 360° stitching the axis controls have nothing to set.
    void updateStitched();
    void setDivergentBeam(bool divergent);
    /// Greys float16 out with the reason when no strategy that could run
    /// (the chosen one, or any for auto) computes in half precision, and
    /// falls back to float32 if it was chosen.
    void updatePrecisionChoice();
    /// Where the axis line puts the axis on `row`.
    void followRow(int row);
    void loadOffsets(const QString& path);

    std::unique_ptr<Ui::ParameterPanel> ui;
    QAction* m_liveAction = nullptr;
    QAction* m_findAxisAction = nullptr;
    QList<QAction*> m_stepActions;
    int m_bins = 0;                        // detector columns
    int m_grid = 0;                        // slice grid (= m_bins unless stitched)
    int m_row = 0;                         // the row the axis spin box shows the axis for
    int m_projections = 0;
    std::vector<double> m_offsets;
    QString m_offsetsFile;
    std::string m_gpus; ///< SliceParams::gpus: kept for Reconstruct to File (no control here)
    int m_blockSignals = 0;
    double m_fineCentre = 0.0;             // axis at the fine slider's middle
    std::optional<double> m_foundAxis;     // the axis the finder found, while it is the one shown
    tomo::CorrectionOptions m_corrections;
    tomo::IterativeOptions m_iterative;
    bool m_divergent = false;              // fan/cone beam: FDK's controls only
    bool m_stitched = false;               // the axis controls are off for 360° stitching
};

} // namespace tomo::ui
