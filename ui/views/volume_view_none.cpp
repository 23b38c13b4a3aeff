// VolumeView for builds without VTK: a notice instead of the 3D view.
#include "views/volume_view.h"

#include <QLabel>
#include <QVBoxLayout>

namespace tomo::ui {

struct VolumeView::Impl {};

VolumeView::VolumeView(QWidget* parent) : QWidget(parent), d(std::make_unique<Impl>()) {
    auto* label = new QLabel(tr("This build has no 3D view: VTK 9 was not found when it was configured "
                                "(apt-get install libvtk9-dev, then configure again)."));
    label->setWordWrap(true);
    label->setAlignment(Qt::AlignCenter);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(label);
}

VolumeView::~VolumeView() = default;
bool VolumeView::isAvailable() { return false; }
void VolumeView::setDataset(int, int) {}
void VolumeView::setVolume(const SubVolume&, const QString&) {}
void VolumeView::clearVolume() {}
void VolumeView::setColormap(const QString&) {}
void VolumeView::setTransferFunction(const TransferFunction&) {}
TransferFunction VolumeView::transferFunction() const { return {}; }
void VolumeView::setBusy(bool) {}
bool VolumeView::hasVolume() const { return false; }
QImage VolumeView::renderedImage() { return {}; }

} // namespace tomo::ui
