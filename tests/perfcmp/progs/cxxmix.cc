// SPDX-License-Identifier: GPL-2.0
// tests/perfcmp case cxxmix: C++ as people write it, built by the suite with g++ (or
// clang++) -O2 -fno-omit-frame-pointer; nothing in it is shaped for a sampler. N rounds
// (usage: cxxmix [N]) of: a virtual call of Sq::area or Circ::area (alternately, a
// ~2 M-iteration loop), sorter() (std::sort of 200 k ints: libstdc++'s templates,
// inlined into the program), 2000 calls of thrower() of which every third throws a
// std::runtime_error caught in main (libgcc's unwinder, libstdc++: no frame pointers)
// and mapper() (a std::map of 20 k insertions: malloc). Prints "sorter N area N".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape()
	{
	}
	virtual double area(int n) const = 0;
};
struct Sq : Shape {
	double area(int n) const override;
};
struct Circ : Shape {
	double area(int n) const override;
};

__attribute__((noinline)) double Sq::area(int n) const
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (double)i * i * 1e-9;
	return s;
}

__attribute__((noinline)) double Circ::area(int n) const
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += 3.14159 * i * 1e-9;
	return s;
}

__attribute__((noinline)) static void sorter(std::vector<int> &v, unsigned seed)
{
	for (auto &x : v) {
		seed = seed * 1103515245 + 12345;
		x = (int)(seed >> 8);
	}
	std::sort(v.begin(), v.end());
}

__attribute__((noinline)) static int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("x" + std::to_string(i));
	return i;
}

__attribute__((noinline)) static long mapper(int n)
{
	std::map<int, long> m;
	for (int i = 0; i < n; i++)
		m[(i * 7919) % 10007] += i;
	long s = 0;
	for (auto &p : m)
		s += p.second;
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40, areas = 0, sorts = 0;
	Sq sq;
	Circ circ;
	std::vector<Shape *> sh{&sq, &circ};
	std::vector<int> v(200000);
	double a = 0;
	long s = 0;
	for (int r = 0; r < rounds; r++) {
		a += sh[r & 1]->area(6000000);
		areas++;
		sorter(v, (unsigned)r);
		sorts++;
		for (int i = 0; i < 2000; i++) {
			try {
				s += thrower(i);
			} catch (std::exception &e) {
				s--;
			}
		}
		s += mapper(20000);
	}
	printf("sorter %d area %d\n", sorts, areas);
	return a > 0 && s != 0 ? 0 : 1;
}
