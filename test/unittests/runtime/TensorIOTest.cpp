//===- TensorIOTest.cpp - .npy and TensorProto readers/writers ------------===//

#include "TensorIO.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace disc;

namespace {

std::string tmpPath(const std::string &name) {
  return std::string(DISC_TEST_TMPDIR) + "/" + name;
}

TEST(Npy, RoundTripAllDTypes) {
  for (DType dt : {DType::Float16, DType::Float32, DType::Float64, DType::Int8,
                   DType::Int16, DType::Int32, DType::Int64, DType::UInt8,
                   DType::UInt16, DType::UInt32, DType::UInt64, DType::Bool}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 3, 4}}) {
      Tensor t;
      ASSERT_TRUE(
          io::makeFilledTensor(dt, shape, io::FillKind::Random, 7, &t).isOk());
      std::string path = tmpPath(std::string("rt_") + dtypeName(dt) + ".npy");
      ASSERT_TRUE(io::writeNpy(path, t).isOk());
      Tensor back;
      Status s = io::readNpy(path, &back);
      ASSERT_TRUE(s.isOk()) << s.toString();
      EXPECT_EQ(back.dtype(), dt);
      EXPECT_EQ(back.shape(), shape);
      ASSERT_EQ(back.byteSize(), t.byteSize());
      if (t.byteSize()) {
        EXPECT_EQ(std::memcmp(back.data(), t.data(), t.byteSize()), 0);
      }
    }
  }
}

TEST(Npy, HeaderIsAligned) {
  Tensor t = Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4});
  std::string bytes = io::encodeNpy(t);
  EXPECT_EQ((bytes.size() - 16) % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (2, 2)"), std::string::npos);
  Tensor v = Tensor::fromVector<int32_t>({3}, {1, 2, 3});
  EXPECT_NE(io::encodeNpy(v).find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, RejectsBadFiles) {
  Tensor t = Tensor::fromVector<float>({4, 4}, std::vector<float>(16, 1.0f));
  std::string good = io::encodeNpy(t);
  Tensor out;
  // Every truncation fails cleanly.
  for (size_t len = 0; len < good.size(); ++len)
    EXPECT_FALSE(io::parseNpy(good.data(), len, &out).isOk()) << len;
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  Status s = io::parseNpy(fortran.data(), fortran.size(), &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("Fortran"), std::string::npos);
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  s = io::parseNpy(bigEndian.data(), bigEndian.size(), &out);
  EXPECT_NE(s.message().find("big-endian"), std::string::npos);
  std::string garbage = "hello world, not numpy";
  EXPECT_FALSE(io::parseNpy(garbage.data(), garbage.size(), &out).isOk());
  EXPECT_FALSE(io::readNpy("/nonexistent.npy", &out).isOk());
}

TEST(TensorProto, ReadsOnnxTestData) {
  Tensor t;
  std::string name;
  Status s = io::readTensorProto(std::string(DISC_ONNX_TESTDATA) +
                                     "/test_add/test_data_set_0/input_0.pb",
                                 &t, &name);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 4, 5}));
  Tensor viaAuto;
  ASSERT_TRUE(io::readTensorFile(std::string(DISC_ONNX_TESTDATA) +
                                     "/test_add/test_data_set_0/input_0.pb",
                                 &viaAuto)
                  .isOk());
  EXPECT_EQ(std::memcmp(viaAuto.data(), t.data(), t.byteSize()), 0);
}

TEST(TensorProto, ReadsOtherElementTypes) {
  struct Case {
    const char *file;
    DType dtype;
  } cases[] = {
      {"/test_and2d/test_data_set_0/input_0.pb", DType::Bool},
      {"/test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb",
       DType::Float16},
      {"/test_argmax_default_axis_example/test_data_set_0/output_0.pb",
       DType::Int64},
  };
  for (const Case &c : cases) {
    Tensor t;
    Status s =
        io::readTensorProto(std::string(DISC_ONNX_TESTDATA) + c.file, &t);
    ASSERT_TRUE(s.isOk()) << c.file << ": " << s.toString();
    EXPECT_EQ(t.dtype(), c.dtype) << c.file;
  }
}

TEST(TensorProto, RejectsBadFiles) {
  Tensor t;
  std::string garbage = "\xff\xff\xff\xff garbage";
  EXPECT_FALSE(io::parseTensorProto(garbage.data(), garbage.size(), &t).isOk());
  std::string empty;
  // An empty message has no data_type.
  EXPECT_FALSE(io::parseTensorProto(empty.data(), 0, &t).isOk());
  std::string contents;
  ASSERT_TRUE(io::readFile(std::string(DISC_ONNX_TESTDATA) +
                               "/test_add/test_data_set_0/input_0.pb",
                           &contents)
                  .isOk());
  for (size_t len :
       {size_t(1), size_t(5), contents.size() / 2, contents.size() - 1})
    EXPECT_FALSE(io::parseTensorProto(contents.data(), len, &t).isOk()) << len;
}

TEST(Generate, ShapesAndDeterminism) {
  std::vector<int64_t> shape;
  ASSERT_TRUE(io::parseShape("2x3x224x224", &shape).isOk());
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 3, 224, 224}));
  ASSERT_TRUE(io::parseShape("scalar", &shape).isOk());
  EXPECT_TRUE(shape.empty());
  EXPECT_FALSE(io::parseShape("2xx3", &shape).isOk());
  EXPECT_FALSE(io::parseShape("", &shape).isOk());
  EXPECT_FALSE(io::parseShape("-1", &shape).isOk());

  Tensor a, b, c;
  ASSERT_TRUE(
      io::makeFilledTensor(DType::Float32, {100}, io::FillKind::Random, 1, &a)
          .isOk());
  io::makeFilledTensor(DType::Float32, {100}, io::FillKind::Random, 1, &b);
  io::makeFilledTensor(DType::Float32, {100}, io::FillKind::Random, 2, &c);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 400), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), 400), 0);
  for (int i = 0; i < 100; ++i) {
    EXPECT_GE(a.data<float>()[i], -1.0f);
    EXPECT_LT(a.data<float>()[i], 1.0f);
  }
  Tensor ones;
  io::makeFilledTensor(DType::Int64, {3}, io::FillKind::Ones, 0, &ones);
  EXPECT_EQ(ones.data<int64_t>()[2], 1);
}

} // namespace
