#!/bin/bash
echo not written; exit 1
