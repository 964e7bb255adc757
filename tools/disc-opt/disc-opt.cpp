//===- disc-opt.cpp - mlir-opt style driver with DISC dialects and passes -===//
#include "disc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::disc::registerAllDiscPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::disc::registerAllDiscDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "DISC optimizer driver\n", registry));
}
