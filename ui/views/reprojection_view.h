// Data consistency of the slice on screen (issue 29): the measured sinogram
// of its row, the forward projection of the slice (Joseph's projector) and
// their difference, with ||measured - A x|| / ||measured||. For any method,
// FBP included; computed by Controller::requestReprojection.
#pragma once

#include "work/recon_types.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace tomo::ui {

class ReprojectionView : public QWidget {
    Q_OBJECT
public:
    explicit ReprojectionView(QWidget* parent = nullptr);

    void setResult(const ReprojectionResult& result);
    /// The last result shown (error set when there was none).
    const ReprojectionResult& result() const { return m_result; }
    /// The line with the norms ("FBP: ||b - Ax|| / ||b|| = 0.012").
    QString normText() const;

signals:
    /// The user asked for the reprojection of the slice on screen.
    void requested();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showImages();

    QLabel* m_measured = nullptr;
    QLabel* m_projected = nullptr;
    QLabel* m_difference = nullptr;
    QLabel* m_norm = nullptr;
    QPushButton* m_update = nullptr;
    ReprojectionResult m_result;
};

} // namespace tomo::ui
